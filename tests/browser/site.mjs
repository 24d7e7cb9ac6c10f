// Headless-browser checks of the generated catalogue site.
//
//   node tests/browser/site.mjs <base-url> <artefact-dir> [<hostile-base-url> [<many-base-url>]]
//
// <base-url> is a rendered site, served over http (tests/site/browser.rs starts a server on
// 127.0.0.1) or opened from disk (a file:// URL of its folder, as a maintainer opens
// dist/site/index.html): every check runs the same way in both.
// Drives Debian's /usr/bin/chromium with playwright-core and checks: no console errors, no
// failed request and no fetch at all (a file:// page may not fetch); search and filters
// narrow the cards and update the URL; a filter in the URL applies; reload and the back
// button restore the view; without JavaScript every agent is listed and linked; the agent
// page shows the Zed, JetBrains and command-line snippets; icons are painted (the mask is a
// data: URI and the icon box shows pixels that are neither the background nor a plain
// square), with the text colour, light and dark variants swapping with the colour scheme,
// under the site's own CSP; axe-core finds no violations on the index and an agent page in
// both colour schemes. Screenshots go to <artefact-dir>. With
// <hostile-base-url> (a site whose entry carries markup and javascript: payloads
// everywhere): nothing runs (no dialog, no console error, no handler attribute, no
// javascript: link), and the payloads show as text, also in cards the script renders. With
// <many-base-url> (a site of more agents than one page holds): the scripted pager pages
// through the filtered list with the page in the URL, loading the icons of the cards it
// shows, and without JavaScript the static pages list every agent. The skills section is
// listed and linked without JavaScript, a skill's page copies its install command and links
// its agent (and back), axe finds no violations there, and a hostile skill's strings stay
// text. Agents in each
// verification state (verified, failed, expired, stale) show their badge on the cards
// (scripted and static) and their page, and the verification filter selects them.
// Exit code 0 when every check passed, 1 otherwise.

import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import vm from 'node:vm';
import { chromium } from 'playwright-core';

const require = createRequire(import.meta.url);
const AXE = require.resolve('axe-core/axe.min.js');

const [base, artefacts, hostileBase, manyBase] = process.argv.slice(2);
if (!base || !artefacts) {
  console.error('usage: node site.mjs <base-url> <artefact-dir>');
  process.exit(2);
}
const url = (p) => new URL(p, base.endsWith('/') ? base : base + '/').href;
const fromDisk = new URL(base).protocol === 'file:';
// From disk, axe cannot read the stylesheets' rules (another origin to the page) and would
// fetch them, which file:// refuses; its preload only feeds the orientation-lock rule.
const AXE_OPTIONS = { resultTypes: ['violations'], preload: !fromDisk };
mkdirSync(artefacts, { recursive: true });

/** The text of a file of a site, over http or from disk. */
async function load(address) {
  if (new URL(address).protocol === 'file:') return readFileSync(fileURLToPath(address), 'utf8');
  const response = await fetch(address);
  if (!response.ok) throw new Error(`${address}: HTTP ${response.status}`);
  return response.text();
}

/** The search index of the site at `siteBase`, by running its script as the page does. */
async function readIndex(siteBase) {
  const sandbox = { window: {} };
  vm.runInNewContext(await load(new URL('assets/search-index.js', siteBase).href), sandbox);
  return sandbox.window.acpSiteIndex;
}

let passed = 0;
const failures = [];
function check(name, ok, detail = '') {
  if (ok) {
    passed += 1;
    console.log(`ok   ${name}`);
  } else {
    failures.push(name);
    console.log(`FAIL ${name}${detail ? `\n     ${detail}` : ''}`);
  }
}

const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  headless: true,
  // playwright-core runs every launch with a fresh temporary --user-data-dir.
  args: [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
  ],
});

/** A page that records console errors, page errors and failed or non-2xx requests. */
async function openPage(context, problems) {
  const page = await context.newPage();
  page.setDefaultTimeout(30000);
  page.on('console', (msg) => {
    if (msg.type() === 'error') problems.push(`console error: ${msg.text()}`);
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('requestfailed', (request) => {
    const reason = request.failure()?.errorText ?? '';
    // A navigation (goto, reload, back) cancels requests still in flight, such as the
    // favicon's; blocked or failing loads have other reasons (and CSP refusals also log a
    // console error).
    if (reason === 'net::ERR_ABORTED') return;
    problems.push(`request failed: ${request.url()} ${reason}`);
  });
  page.on('response', (response) => {
    if (response.status() >= 400) problems.push(`HTTP ${response.status()}: ${response.url()}`);
  });
  // Nothing may be fetched: from disk, the browser refuses it.
  page.on('request', (request) => {
    if (['fetch', 'xhr', 'eventsource', 'websocket'].includes(request.resourceType())) {
      problems.push(`${request.resourceType()} request: ${request.url()}`);
    }
  });
  return page;
}

const DATA_MASK = /^url\("data:image\/svg\+xml;base64,[A-Za-z0-9+/=]+"\)$/;

/** What is painted of one icon element: its computed mask and colours, and whether its box
 * shows pixels that differ both from the box hidden (nothing painted: a mask that did not
 * load hides everything) and from the box unmasked (a plain square). */
async function iconPaint(page, handle) {
  await handle.scrollIntoViewIfNeeded();
  const box = await handle.boundingBox();
  const clip = { x: box.x, y: box.y, width: box.width, height: box.height };
  const shot = () => page.screenshot({ clip, animations: 'disabled' });
  const shown = await shot();
  await handle.evaluate((n) => { n.style.visibility = 'hidden'; });
  const hidden = await shot();
  await handle.evaluate((n) => { n.style.visibility = ''; n.style.setProperty('--icon', 'none'); n.style.maskImage = 'none'; n.style.webkitMaskImage = 'none'; });
  const square = await shot();
  await handle.evaluate((n) => { n.removeAttribute('style'); });
  const style = await handle.evaluate((n) => {
    const s = getComputedStyle(n);
    return { cls: n.className, mask: s.maskImage || s.webkitMaskImage, bg: s.backgroundColor, color: s.color };
  });
  return { ...style, painted: !shown.equals(hidden) && !shown.equals(square) };
}

/** Checks that every icon of `selector` on the page is painted with the text colour. */
async function checkIcons(page, selector, what) {
  const results = [];
  for (const handle of await page.$$(selector)) {
    if ((await handle.getAttribute('class')).includes('i-none')) continue;
    results.push(await iconPaint(page, handle));
  }
  const bad = results.filter((i) => !i.painted || !DATA_MASK.test(i.mask) || i.bg !== i.color);
  const shown = (i) => ({ ...i, mask: i.mask.slice(0, 60) });
  check(`${what}: icons are painted with the text colour`, results.length > 0 && bad.length === 0, JSON.stringify(bad.slice(0, 3).map(shown)));
  return results;
}

const searchText = (a) => [a.name, a.id, a.description, ...a.tags].join(' ').toLowerCase();
const cardNames = (page) => page.$$eval('#agent-list .card-title a', (as) => as.map((a) => a.textContent));
const waitReady = (page) => page.waitForSelector('#filters:not([hidden])');

/** Runs one group of checks; an exception fails the group, not the ones after it. */
async function section(name, body) {
  try {
    await body();
  } catch (error) {
    failures.push(`${name}: exception`);
    console.log(`FAIL ${name}: exception\n     ${error.stack || error}`);
  }
}

try {
  const index = await readIndex(url(''));
  const all = index.agents;
  check('the search index lists agents', all.length > 0, `got ${all.length}`);

  // ---- Search, filters, URL state, reload, back button (JavaScript on) ----
  await section('search, filters and URL state', async () => {
    const problems = [];
    const context = await browser.newContext({ colorScheme: 'light' });
    const page = await openPage(context, problems);
    await page.goto(url('index.html'));
    await waitReady(page);
    const initial = await cardNames(page);
    check('index shows every agent (one page)', initial.length === Math.min(all.length, index.page_size), `${initial.length} cards`);
    const sorted = [...initial].sort((a, b) => a.toLowerCase().localeCompare(b.toLowerCase()));
    check('cards are sorted by name', JSON.stringify(sorted) === JSON.stringify(initial), initial.join(', '));

    // Keyboard: the first Tab reaches the skip link.
    await page.keyboard.press('Tab');
    const first = await page.evaluate(() => document.activeElement?.className);
    check('first Tab focuses the skip link', first === 'skip-link', `focused ${first}`);

    // Typing narrows the cards and puts q= into the URL.
    // The id of a binary agent that no other agent's text contains.
    const target =
      all.find((a) => a.deploy.includes('binary') && all.filter((b) => searchText(b).includes(a.id)).length === 1) ?? all[0];
    const word = target.id;
    await page.fill('#q', word);
    await page.waitForFunction((w) => new URLSearchParams(location.search).get('q') === w, word);
    const searched = await cardNames(page);
    check(
      `search "${word}" narrows the cards`,
      searched.length > 0 && searched.length < initial.length && searched.includes(target.name),
      searched.join(', '),
    );
    const countText = await page.textContent('#result-count');
    check('count shows the number of agents shown', countText.includes(String(searched.length)), countText);

    // Choosing a filter narrows and updates the URL.
    await page.fill('#q', '');
    await page.waitForFunction(() => !new URLSearchParams(location.search).has('q'));
    await page.check('input[name="deploy"][value="binary"]');
    await page.waitForFunction(() => new URLSearchParams(location.search).get('deploy') === 'binary');
    const binaries = await cardNames(page);
    const expectedBinaries = all.filter((a) => a.deploy.includes('binary')).map((a) => a.name);
    check(
      'deployment filter narrows to binary agents',
      JSON.stringify([...binaries].sort()) === JSON.stringify([...expectedBinaries].sort()) && binaries.length < initial.length,
      `${binaries.join(', ')} vs ${expectedBinaries.join(', ')}`,
    );
    await page.selectOption('#f-platform', 'windows-aarch64');
    await page.waitForFunction(() => new URLSearchParams(location.search).get('platform') === 'windows-aarch64');
    const narrowed = await cardNames(page);
    const expectedNarrowed = all
      .filter((a) => a.deploy.includes('binary') && (a.platforms.includes('windows-aarch64') || a.deploy.includes('npx') || a.deploy.includes('uvx')))
      .map((a) => a.name);
    check(
      'platform filter narrows further',
      JSON.stringify([...narrowed].sort()) === JSON.stringify([...expectedNarrowed].sort()),
      `${narrowed.join(', ')} vs ${expectedNarrowed.join(', ')}`,
    );
    await page.fill('#q', word);
    await page.waitForFunction((w) => new URLSearchParams(location.search).get('q') === w, word);
    const combined = await cardNames(page);
    const filteredUrl = page.url();
    check('URL holds search and filters', /q=/.test(filteredUrl) && /deploy=binary/.test(filteredUrl) && /platform=windows-aarch64/.test(filteredUrl), filteredUrl);

    // Reload restores the same view.
    await page.reload();
    await waitReady(page);
    const reloaded = await cardNames(page);
    const controls = await page.evaluate(() => ({
      q: document.querySelector('#q').value,
      binary: document.querySelector('input[name="deploy"][value="binary"]').checked,
      platform: document.querySelector('#f-platform').value,
    }));
    check('reload restores the cards', JSON.stringify(reloaded) === JSON.stringify(combined), `${reloaded.join(', ')} vs ${combined.join(', ')}`);
    check(
      'reload restores the controls',
      controls.q === word && controls.binary && controls.platform === 'windows-aarch64',
      JSON.stringify(controls),
    );

    // Back goes to the previous state (binary + platform, no search).
    await page.goBack();
    await page.waitForFunction(() => !new URLSearchParams(location.search).has('q'));
    const back = await cardNames(page);
    const backQ = await page.inputValue('#q');
    check('back button restores the previous view', JSON.stringify(back) === JSON.stringify(narrowed) && backQ === '', `${back.join(', ')}; q=${backQ}`);

    // A shared link with a tag filter opens filtered.
    const tagged = all.find((a) => a.tags.length > 0);
    const tag = tagged.tags[0];
    await page.goto(url(`index.html?tag=${encodeURIComponent(tag)}`));
    await waitReady(page);
    const byTag = await cardNames(page);
    const expectedTag = all.filter((a) => a.tags.includes(tag)).map((a) => a.name);
    check(`shared link ?tag=${tag} shows the tagged agents`, JSON.stringify([...byTag].sort()) === JSON.stringify([...expectedTag].sort()), byTag.join(', '));
    const tagBox = await page.isChecked(`input[name="tag"][value="${tag}"]`);
    check('the tag checkbox is checked', tagBox);
    await checkIcons(page, '#agent-list .icon', 'cards the script rendered');

    // Clearing restores everything.
    await page.click('button[type="reset"]');
    await page.waitForFunction(() => location.search === '');
    check('clearing shows every agent again', (await cardNames(page)).length === initial.length);

    check('index: no console errors or failed requests', problems.length === 0, problems.join('\n     '));
    await context.close();
  });

  // ---- JavaScript disabled: every agent listed and linked ----
  await section('without JavaScript', async () => {
    const problems = [];
    const context = await browser.newContext({ javaScriptEnabled: false });
    const page = await openPage(context, problems);
    const listed = new Set();
    let next = url('index.html');
    let pages = 0;
    while (next && pages < 1000) {
      await page.goto(next);
      pages += 1;
      const hrefs = await page.$$eval('#agent-list .card-title a', (as) => as.map((a) => a.href));
      hrefs.forEach((h) => listed.add(h));
      next = await page.$eval('#pager a[rel="next"]', (a) => a.href).catch(() => null);
    }
    const expected = all.map((a) => url(a.href));
    const missing = expected.filter((h) => !listed.has(h));
    check('without JavaScript every agent is listed and linked', missing.length === 0 && listed.size === all.length, `missing: ${missing.join(', ')}`);
    const formHidden = await page.goto(url('index.html')).then(() => page.isHidden('#filters'));
    check('without JavaScript the filter form stays hidden', formHidden);
    const agentResponse = await page.goto(expected[0]);
    check('an agent link opens its page', agentResponse.ok() && (await page.isVisible('h1')));
    check('no-JS: no failed requests', problems.length === 0, problems.join('\n     '));
    await context.close();
  });

  // ---- Agent page: install snippets and copy buttons ----
  const withPreview = all.find((a) => a.preview) ?? all[0];
  await section('agent page', async () => {
    const problems = [];
    const context = await browser.newContext({ colorScheme: 'light' });
    // A file:// page has an opaque origin: grant the clipboard to every origin there.
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], fromDisk ? {} : { origin: new URL(base).origin });
    const page = await openPage(context, problems);
    await page.goto(url(withPreview.href));
    for (const [key, needle] of [['zed', '"agent_servers"'], ['jetbrains', '"agent_servers"'], ['cli', '']]) {
      const snippet = page.locator(`#install [data-target="${key}"] pre`).first();
      const visible = await snippet.isVisible();
      const text = visible ? await snippet.textContent() : '';
      check(`agent page shows the ${key} snippet`, visible && text.includes(needle) && text.length > 10, text.slice(0, 200));
    }
    const zed = JSON.parse(await page.locator('#install [data-target="zed"] pre').first().textContent());
    check('the Zed snippet is valid JSON with agent_servers', zed.agent_servers && Object.keys(zed.agent_servers).length === 1, JSON.stringify(zed));
    if (withPreview.preview) {
      check('the preview channel has its own snippets', await page.isVisible('#install-preview [data-target="zed"] pre'));
    }
    const copy = page.locator('#install [data-target="zed"] button.copy').first();
    check('copy button is a visible button', await copy.isVisible());
    await copy.click();
    await page.waitForFunction(() => document.querySelector('#copy-status').textContent !== '');
    const clip = await page.evaluate(() => navigator.clipboard.readText());
    const expectedClip = await page.locator('#install [data-target="zed"] pre').first().textContent();
    check('copy puts the snippet on the clipboard', clip === expectedClip, clip.slice(0, 120));
    check('agent page: no console errors or failed requests', problems.length === 0, problems.join('\n     '));
    await context.close();
  });

  // ---- 390 px: an agent page's Downloads table scrolls inside its wrapper, and says so ----
  await section('narrow downloads table', async () => {
    const problems = [];
    const context = await browser.newContext({ colorScheme: 'light', viewport: { width: 390, height: 844 } });
    const page = await openPage(context, problems);
    let measured = null;
    for (const agent of all.slice(0, 60)) {
      await page.goto(url(agent.href));
      if ((await page.locator('#downloads .table-wrap').count()) === 0) continue;
      measured = await page.$eval('#downloads .table-wrap', (el) => ({
        overflowX: getComputedStyle(el).overflowX,
        scrollWidth: el.scrollWidth,
        clientWidth: el.clientWidth,
      }));
      measured.hint = await page.isVisible('#downloads .scroll-hint');
      break;
    }
    check('390 px: an agent page has a Downloads table', measured !== null);
    if (measured) {
      check('390 px: the Downloads table scrolls inside its wrapper', measured.overflowX === 'auto' && measured.scrollWidth > measured.clientWidth, JSON.stringify(measured));
      check('390 px: the Downloads table says it scrolls', measured.hint, JSON.stringify(measured));
    }
    check('390 px: no console errors or failed requests', problems.length === 0, problems.join('\n     '));
    await context.close();
  });

  // ---- Both colour schemes: icons under the site's CSP, then axe and screenshots ----
  // An agent with light/dark icon variants when there is one, else any agent with an icon.
  const firstSheet = await load(url('assets/icons/1.css'));
  const variantId = /@media \(prefers-color-scheme:dark\)\{\.i-([a-z0-9-]+)\{/.exec(firstSheet)?.[1];
  const variant = all.find((a) => a.id === variantId) ?? all.find((a) => a.icon !== 'i-none');
  const variantMasks = {
    light: new RegExp(`^\\.i-${variantId}\\{--icon:(url\\("[^"]+"\\))\\}$`, 'm').exec(firstSheet)?.[1],
    dark: new RegExp(`^@media \\(prefers-color-scheme:dark\\)\\{\\.i-${variantId}\\{--icon:(url\\("[^"]+"\\))\\}\\}$`, 'm').exec(firstSheet)?.[1],
  };
  check('the icon stylesheet has a theme variant', Boolean(variantId && variantMasks.light && variantMasks.dark && variantMasks.light !== variantMasks.dark), variantId);
  const themed = [];
  for (const scheme of ['light', 'dark']) {
    // Icons first, without bypassCSP: the site's own policy must let the masks load.
    await section(`${scheme}: icons`, async () => {
      const problems = [];
      const context = await browser.newContext({ colorScheme: scheme, viewport: { width: 1280, height: 900 } });
      const page = await openPage(context, problems);
      await page.goto(url('index.html'));
      // The static cards have icons too: check them even when the script does not start.
      await page.waitForSelector('#filters:not([hidden])', { timeout: 5000 }).catch(() => {});
      await page.waitForLoadState('networkidle');
      const icons = await checkIcons(page, '#agent-list .icon', `${scheme}: index`);
      themed.push(icons[0]?.color);
      const shownVariant = icons.find((i) => i.cls.split(' ').includes(`i-${variantId}`));
      check(`${scheme}: the ${variantId} icon is its ${scheme} variant`, shownVariant?.mask === variantMasks[scheme], shownVariant?.mask.slice(0, 80));
      for (const agent of [withPreview, variant]) {
        await page.goto(url(agent.href));
        await page.waitForLoadState('networkidle');
        await checkIcons(page, '.agent-head .icon', `${scheme}: ${agent.href}`);
      }
      check(`${scheme}: icons: no console errors or failed requests`, problems.length === 0, problems.join('\n     '));
      await context.close();
    });
    await section(`${scheme}: axe and screenshots`, async () => {
      const problems = [];
      const context = await browser.newContext({ colorScheme: scheme, bypassCSP: true, viewport: { width: 1280, height: 900 } });
      const page = await openPage(context, problems);

      await page.goto(url('index.html'));
      await waitReady(page);
      // Let the masks load before taking screenshots.
      await page.waitForLoadState('networkidle');
      await page.screenshot({ path: path.join(artefacts, `index-${scheme}.png`), fullPage: true });
      await page.addScriptTag({ path: AXE });
      const indexAxe = await page.evaluate((options) => axe.run(document, options), AXE_OPTIONS);
      check(`${scheme}: axe finds no violations on the index`, indexAxe.violations.length === 0, formatAxe(indexAxe.violations));

      // Open the collapsed filter groups too, so axe sees every control.
      await page.evaluate(() => document.querySelectorAll('details').forEach((d) => { d.open = true; }));
      const openAxe = await page.evaluate((options) => axe.run(document, options), AXE_OPTIONS);
      check(`${scheme}: axe finds no violations with every filter group open`, openAxe.violations.length === 0, formatAxe(openAxe.violations));

      for (const [name, agent] of [['agent', withPreview], ['agent-icon', variant]]) {
        if (!agent) continue;
        await page.goto(url(agent.href));
        await page.waitForLoadState('networkidle');
        if (name === 'agent') {
          await page.screenshot({ path: path.join(artefacts, `agent-${scheme}.png`), fullPage: true });
        }
        await page.addScriptTag({ path: AXE });
        const agentAxe = await page.evaluate((options) => axe.run(document, options), AXE_OPTIONS);
        check(`${scheme}: axe finds no violations on ${agent.href}`, agentAxe.violations.length === 0, formatAxe(agentAxe.violations));
      }
      check(`${scheme}: no console errors or failed requests`, problems.length === 0, problems.join('\n     '));
      await context.close();
    });
  }
  check('text colour differs between light and dark', themed[0] && themed[1] && themed[0] !== themed[1], themed.join(' vs '));
  await section('verification badges and filter', () => verificationChecks(all));
  await section('skills', skillChecks);
  if (hostileBase) await section('hostile site', hostileChecks);
  if (manyBase) await section('many agents', pagingChecks);
} catch (error) {
  failures.push(`exception: ${error.stack || error}`);
  console.log(`FAIL exception\n${error.stack || error}`);
} finally {
  await browser.close();
}

/** The skills section: the nav link, every skill listed and linked without JavaScript, a
 * skill's page with its install commands and a working copy button, linked to and from its
 * agent's page, and axe in both colour schemes on the listing and a skill's page. */
async function skillChecks() {
  const problems = [];
  const nojs = await browser.newContext({ javaScriptEnabled: false });
  const plain = await openPage(nojs, problems);
  await plain.goto(url('index.html'));
  const nav = plain.locator('header nav a', { hasText: 'Skills' });
  check('skills: the navigation links the skills', (await nav.count()) === 1);
  await nav.click();
  await plain.waitForLoadState('load');
  const skills = await plain.$$eval('#skill-list .card-title a', (as) => as.map((a) => a.href));
  check('skills: without JavaScript the listing links the skills', skills.length > 0, plain.url());
  await plain.goto(skills[0]);
  const agentLink = await plain.$eval('#details a[href*="agents/"]', (a) => a.href).catch(() => null);
  await nojs.close();

  const context = await browser.newContext({ colorScheme: 'light' });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], fromDisk ? {} : { origin: new URL(base).origin });
  const page = await openPage(context, problems);
  await page.goto(skills[0]);
  const commands = await page.$$eval('#install pre', (pres) => pres.map((p) => p.textContent));
  check('skills: the page shows install commands', commands.length > 0 && commands.every((c) => c.length > 10), commands.join(' | '));
  const copy = page.locator('#install button.copy').first();
  check('skills: the copy button is visible', await copy.isVisible());
  await copy.click();
  await page.waitForFunction(() => document.querySelector('#copy-status').textContent !== '');
  const clip = await page.evaluate(() => navigator.clipboard.readText());
  check('skills: copy puts the command on the clipboard', clip === commands[0], clip);
  if (agentLink) {
    await page.goto(agentLink);
    const back = await page.$$eval('#details a[href*="skills/"]', (as) => as.map((a) => a.href));
    check("skills: the agent's page links its skill", back.includes(skills[0]), back.join(' '));
  }
  await context.close();

  for (const scheme of ['light', 'dark']) {
    const themed = await browser.newContext({ colorScheme: scheme, bypassCSP: true, viewport: { width: 1280, height: 900 } });
    const view = await openPage(themed, problems);
    for (const [name, address] of [['skills', url('skills/index.html')], ['skill', skills[0]]]) {
      await view.goto(address);
      await view.waitForLoadState('networkidle');
      await view.screenshot({ path: path.join(artefacts, `${name}-${scheme}.png`), fullPage: true });
      await view.addScriptTag({ path: AXE });
      const result = await view.evaluate((options) => axe.run(document, options), AXE_OPTIONS);
      check(`${scheme}: axe finds no violations on ${name}`, result.violations.length === 0, formatAxe(result.violations));
    }
    await themed.close();
  }
  check('skills: no console errors or failed requests', problems.length === 0, problems.join('\n     '));
}

/** The badge of each verification state on the cards (scripted and static) and the agent
 * page, and the filter by state, for the agents the search index gives a state. */
async function verificationChecks(all) {
  const LABELS = { verified: 'Verified', failed: 'Launch failed', expired: 'Verification expired', stale: 'Verified an earlier release' };
  const withState = all.filter((a) => Array.isArray(a.verified) && a.verified.length === 1);
  const states = [...new Set(withState.map((a) => a.verified[0]))].sort();
  check('the index has an agent in every verification state', JSON.stringify(states) === JSON.stringify(Object.keys(LABELS).sort()), states.join(', '));
  const badges = (page) => page.$$eval('#agent-list .card', (cards) => cards.map((c) => {
    const badge = c.querySelector('p.badge:not(.badge-warn)');
    return [c.querySelector('.card-title a').textContent, badge ? `${badge.className}|${badge.textContent}` : ''];
  }));
  const expected = (names) => Object.fromEntries(all.filter((a) => names.includes(a.name)).map((a) => {
    const state = withState.includes(a) ? a.verified[0] : null;
    return [a.name, state ? `badge badge-${state}|${LABELS[state]}` : ''];
  }));
  const problems = [];
  for (const javaScriptEnabled of [true, false]) {
    const context = await browser.newContext({ colorScheme: 'light', javaScriptEnabled });
    const page = await openPage(context, problems);
    await page.goto(url('index.html'));
    if (javaScriptEnabled) await waitReady(page);
    const shown = Object.fromEntries(await badges(page));
    const want = expected(Object.keys(shown));
    const how = javaScriptEnabled ? 'scripted' : 'static';
    check(`${how} cards show the badge of their verification state, and only those`, JSON.stringify(shown) === JSON.stringify(want), `${JSON.stringify(shown)} vs ${JSON.stringify(want)}`);
    await context.close();
  }
  const context = await browser.newContext({ colorScheme: 'light' });
  const page = await openPage(context, problems);
  for (const state of Object.keys(LABELS)) {
    await page.goto(url(`index.html?verified=${state}`));
    await waitReady(page);
    const names = await cardNames(page);
    const want = withState.filter((a) => a.verified[0] === state).map((a) => a.name);
    check(`?verified=${state} shows the ${state} agents`, names.length > 0 && JSON.stringify([...names].sort()) === JSON.stringify([...want].sort()), `${names.join(', ')} vs ${want.join(', ')}`);
    check(`the ${state} checkbox is checked`, await page.isChecked(`input[name="verified"][value="${state}"]`));
  }
  await page.goto(url('index.html'));
  await waitReady(page);
  await page.check('input[name="verified"][value="stale"]');
  await page.check('input[name="verified"][value="expired"]');
  await page.waitForFunction(() => new URLSearchParams(location.search).getAll('verified').length > 0);
  const noLonger = await cardNames(page);
  const wantNoLonger = withState.filter((a) => ['stale', 'expired'].includes(a.verified[0])).map((a) => a.name);
  check('choosing stale and expired shows the agents whose evidence no longer applies', JSON.stringify([...noLonger].sort()) === JSON.stringify([...wantNoLonger].sort()), `${noLonger.join(', ')} vs ${wantNoLonger.join(', ')}`);
  for (const agent of withState) {
    await page.goto(url(agent.href));
    const state = agent.verified[0];
    const badge = await page.$eval('.agent p.badge:not(.badge-warn)', (b) => `${b.className}|${b.textContent}`).catch(() => '');
    const facts = await page.$eval('.agent', (a) => a.textContent);
    const phrase = { verified: 'launched and answered ACP', failed: 'launched, with problems', expired: 'Expired:', stale: 'Verified an earlier release:' }[state];
    check(`the ${state} agent's page shows its badge and says so`, badge === `badge badge-${state}|${LABELS[state]}` && facts.includes(phrase), `${badge}; ${phrase}`);
  }
  check('verification: no console errors or failed requests', problems.length === 0, problems.join('\n     '));
  await context.close();
}

async function hostileChecks() {
  const hurl = (p) => new URL(p, hostileBase).href;
  const problems = [];
  const dialogs = [];
  const context = await browser.newContext();
  const page = await openPage(context, problems);
  page.on('dialog', async (dialog) => {
    dialogs.push(dialog.message());
    await dialog.dismiss();
  });
  const hostile = (await readIndex(hurl(''))).agents.find((a) => a.id === 'evil');
  const inert = async (where) => {
    const found = await page.evaluate(() => {
      const handlers = [];
      for (const element of document.querySelectorAll('*')) {
        for (const attribute of element.attributes) {
          if (/^on/i.test(attribute.name)) handlers.push(`${element.tagName} ${attribute.name}`);
          if (/^\s*(javascript|data|vbscript):/i.test(attribute.value)) handlers.push(`${element.tagName} ${attribute.name}=${attribute.value}`);
        }
      }
      const foreign = [...document.querySelectorAll('script, iframe, img, object, embed, form:not(#filters)')]
        .filter((e) => !(e.tagName === 'SCRIPT' && /(^|\/)assets\/(site|search-index)\.js$/.test(e.getAttribute('src') ?? '')))
        .map((e) => e.outerHTML.slice(0, 80));
      return { handlers, foreign };
    });
    check(`hostile ${where}: no handlers or script URLs in the DOM`, found.handlers.length === 0, found.handlers.join('; '));
    check(`hostile ${where}: no injected elements`, found.foreign.length === 0, found.foreign.join('; '));
  };

  await page.goto(hurl(hostile.href));
  await page.waitForLoadState('networkidle');
  await inert('agent page');
  const h1 = await page.textContent('h1');
  check('hostile agent page shows the name as text', h1 === hostile.name, h1);
  const lead = await page.textContent('.agent .lead');
  check('hostile description shows as text', lead === hostile.description, lead);
  const links = await page.$$eval('main a[href]', (as) => as.map((a) => a.href));
  check('hostile agent page links only http(s) or the site', links.every((h) => h.startsWith(hostileBase) || /^https?:\/\//.test(h)), links.join(' '));

  // Cards rendered by the script from the search index, and a hostile query string.
  await page.goto(hurl('index.html?q=' + encodeURIComponent('<script>alert(1)</script>') + '&tag=' + encodeURIComponent('"><img src=x onerror=alert(2)>')));
  await waitReady(page);
  await inert('index with a hostile query');
  const query = await page.inputValue('#q');
  check('hostile query stays in the search box as text', query === '<script>alert(1)</script>', query);
  await page.goto(hurl('index.html?q=evil'));
  await waitReady(page);
  await inert('index');
  const names = await cardNames(page);
  check('hostile card shows the name as text', names.length === 1 && names[0] === hostile.name, names.join(', '));
  // A skill whose every string is an injection attempt.
  await page.goto(hurl('skills/evil-skill/index.html'));
  await page.waitForLoadState('networkidle');
  await inert('skill page');
  const skillLead = await page.textContent('.agent .lead');
  check('hostile skill description shows as text', skillLead.startsWith("<script>alert('description')</script>"), skillLead);
  await page.goto(hurl('skills/index.html'));
  await inert('skills listing');
  check('hostile pages open no dialog', dialogs.length === 0, dialogs.join('; '));
  check('hostile pages: no console errors or failed requests', problems.length === 0, problems.join('\n     '));
  await context.close();
}

async function pagingChecks() {
  const murl = (p) => new URL(p, manyBase).href;
  const index = await readIndex(murl(''));
  const total = index.agents.length;
  const size = index.page_size;
  const problems = [];
  const context = await browser.newContext();
  const page = await openPage(context, problems);
  await page.goto(murl('index.html'));
  await waitReady(page);
  const count = await page.textContent('#result-count');
  check('many: the count shows the first page of all agents', count === `Showing 1–${size} of ${total} agents`, count);
  const first = await cardNames(page);
  await page.click('#pager a[rel="next"]');
  await page.waitForFunction(() => new URLSearchParams(location.search).get('page') === '2');
  const second = await cardNames(page);
  check('many: Next shows the next page', second.length === size && second[0] === index.agents[size].name, second[0]);
  const focused = await page.evaluate(() => document.activeElement?.id);
  check('many: paging moves focus to the count', focused === 'result-count', focused);
  // Page 2's icons are in the second stylesheet, which the script adds when it shows them.
  await page.waitForLoadState('networkidle');
  await checkIcons(page, '#agent-list .icon', 'many: page 2 (scripted)');
  const sheets = await page.$$eval('link[rel="stylesheet"]', (ls) => ls.map((l) => l.getAttribute('href')));
  check('many: the script added the icon stylesheet of page 2 once', sheets.filter((h) => h === 'assets/icons/2.css').length === 1, sheets.join(' '));
  await page.reload();
  await waitReady(page);
  check('many: reload keeps the page', JSON.stringify(await cardNames(page)) === JSON.stringify(second));
  await page.goBack();
  await page.waitForFunction(() => !new URLSearchParams(location.search).has('page'));
  check('many: back returns to page 1', JSON.stringify(await cardNames(page)) === JSON.stringify(first));
  // Filtering resets to page 1 and pages the matches.
  await page.goto(murl('index.html?page=3'));
  await waitReady(page);
  await page.fill('#q', 'agent 1');
  await page.waitForFunction(() => new URLSearchParams(location.search).get('q') === 'agent 1');
  // Every word must occur in the name, id, description or tags.
  const matching = index.agents.filter((a) => ['agent', '1'].every((w) => searchText(a).includes(w))).length;
  const filtered = await page.textContent('#result-count');
  check('many: a search goes back to page 1 of the matches', filtered === `Showing 1–${size} of ${matching} matching agents (${total} agents in total)` && !page.url().includes('page='), `${filtered} ${page.url()}`);
  const last = Math.ceil(total / size);
  await page.goto(murl(`index.html?page=${last + 5}`));
  await waitReady(page);
  check('many: a page past the end shows the last page', (await page.textContent('#result-count')).startsWith(`Showing ${(last - 1) * size + 1}–${total}`) && page.url().includes(`page=${last}`), page.url());
  check('many: no console errors or failed requests', problems.length === 0, problems.join('\n     '));
  await context.close();

  const nojs = await browser.newContext({ javaScriptEnabled: false });
  const plain = await openPage(nojs, []);
  const listed = new Set();
  let next = murl('index.html');
  let pages = 0;
  while (next && pages < 100) {
    await plain.goto(next);
    pages += 1;
    (await plain.$$eval('#agent-list .card-title a', (as) => as.map((a) => a.href))).forEach((h) => listed.add(h));
    next = await plain.$eval('#pager a[rel="next"]', (a) => a.href).catch(() => null);
  }
  check('many: without JavaScript the static pages list every agent', listed.size === total && pages === last, `${listed.size} agents on ${pages} pages`);
  await nojs.close();
}

function formatAxe(violations) {
  return violations
    .map((v) => `${v.id} (${v.impact}): ${v.help}\n       ${v.nodes.slice(0, 3).map((n) => n.target.join(' ') + ' ' + (n.failureSummary || '').replace(/\n/g, ' ')).join('\n       ')}`)
    .join('\n     ');
}

console.log(`\nbrowser checks: ${passed} ok, ${failures.length} failed; screenshots in ${artefacts}`);
process.exit(failures.length === 0 ? 0 : 1);
