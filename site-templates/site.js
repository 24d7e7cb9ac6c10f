/* ACP agent registry catalogue: progressive enhancement, no dependencies.
 *
 * Without this script every page works: all agents are listed (paged) and linked, and the
 * install snippets are selectable text. With it: copy buttons, and on the index, search and
 * filters over the search index, paged, with the state in the query string (shareable links,
 * the back button works). Data only ever reaches the page through textContent.
 *
 * Works from disk too (file://), where a page may not fetch anything: the search index is a
 * script (assets/search-index.js sets window.acpSiteIndex) and the icons are data: URIs in
 * stylesheets, both loaded by adding <script>/<link> elements. */
(function () {
  'use strict';

  // Filters, in the order of the query string. `any`: the agent has one of the chosen values;
  // `all`: it has every chosen value; `eq`: single choice.
  var FILTERS = [
    { name: 'deploy', multi: true, match: 'any', field: 'deploy' },
    { name: 'auth', multi: true, match: 'any', field: 'auth' },
    { name: 'platform', multi: false, match: 'platform' },
    { name: 'protocol', multi: false, match: 'eq', field: 'protocol' },
    { name: 'license', multi: false, match: 'eq', field: 'license' },
    { name: 'cap', multi: true, match: 'all', field: 'capabilities' },
    { name: 'tag', multi: true, match: 'all', field: 'tags' },
    { name: 'verified', multi: true, match: 'any', field: 'verified' },
    { name: 'works', multi: true, match: 'all', field: 'works_in' }
  ];
  var AGENT_HREF = /^agents\/[a-z][a-z0-9-]*\/index\.html$/;
  // The badge classes the stylesheet knows (a state names a class).
  var VERIFICATION_STATES = ['verified', 'failed', 'expired', 'stale'];

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function each(list, fn) {
    Array.prototype.forEach.call(list, fn);
  }

  function has(list, value) {
    return Array.isArray(list) && list.indexOf(value) >= 0;
  }

  /* ---- Copy buttons (agent pages) ---- */

  function selectContents(node) {
    var range = document.createRange();
    range.selectNodeContents(node);
    var selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
  }

  function initCopy() {
    var status = document.getElementById('copy-status');
    function report(message) {
      if (status) {
        status.textContent = '';
        status.textContent = message;
      }
    }
    each(document.querySelectorAll('button[data-copy]'), function (button) {
      var target = document.getElementById(button.getAttribute('data-copy'));
      if (!target) return;
      var label = button.firstChild;
      button.hidden = false;
      button.addEventListener('click', function () {
        function fallback() {
          selectContents(target);
          report('Snippet selected: press Ctrl+C (Cmd+C on a Mac) to copy it.');
        }
        if (!navigator.clipboard || !window.isSecureContext) {
          fallback();
          return;
        }
        navigator.clipboard.writeText(target.textContent).then(function () {
          report('Copied to the clipboard.');
          if (label && label.nodeType === 3) {
            label.nodeValue = 'Copied';
            window.setTimeout(function () { label.nodeValue = 'Copy'; }, 1500);
          }
        }, fallback);
      });
    });
  }

  /* ---- Catalogue (index) ---- */

  function initCatalogue() {
    var form = document.getElementById('filters');
    var list = document.getElementById('agent-list');
    var count = document.getElementById('result-count');
    var pager = document.getElementById('pager');
    if (!form || !list || !count || !pager) return;
    if (!window.URLSearchParams || !window.history || !window.history.pushState) return;
    // A script, not fetch(): file:// pages may load scripts but not fetch files. If it does
    // not load, the static list stays: it is complete and linked.
    var script = document.createElement('script');
    script.addEventListener('load', function () {
      var index = window.acpSiteIndex;
      if (index && Array.isArray(index.agents)) {
        start(index, { form: form, list: list, count: count, pager: pager });
      }
    });
    script.src = form.getAttribute('data-index');
    document.head.appendChild(script);
  }

  /* The icons of the agents at positions [(n-1)*pageSize, n*pageSize) of the index are in
   * <data-icons>n.css (the stylesheet of listing page n): add each stylesheet once, when a
   * card of it is shown. */
  function iconLoader(base, pageSize) {
    var loaded = {};
    each(document.querySelectorAll('link[rel="stylesheet"]'), function (link) {
      loaded[link.href] = true;
    });
    return function (position) {
      var link = el('link');
      link.rel = 'stylesheet';
      link.href = base + (Math.floor(position / pageSize) + 1) + '.css';
      if (loaded[link.href]) return;
      loaded[link.href] = true;
      document.head.appendChild(link);
    };
  }

  function start(index, ui) {
    var agents = index.agents;
    var pageSize = index.page_size > 0 ? index.page_size : 48;
    var form = ui.form;
    var search = form.querySelector('#q');
    var loadIcons = iconLoader(form.getAttribute('data-icons'), pageSize);
    var typing = false;
    var timer = 0;
    var added = 0;

    agents.forEach(function (agent, position) {
      agent.position = position;
      agent.searchText = [agent.name, agent.id, agent.description]
        .concat(agent.tags || [])
        .join(' ')
        .toLowerCase();
    });

    function readUrl() {
      var params = new URLSearchParams(window.location.search);
      var state = { q: params.get('q') || '', page: Math.max(1, parseInt(params.get('page'), 10) || 1) };
      FILTERS.forEach(function (f) {
        state[f.name] = f.multi
          ? params.getAll(f.name).filter(function (v) { return v !== ''; })
          : params.get(f.name) || '';
      });
      return state;
    }

    function readForm(page) {
      var state = { q: search.value, page: page };
      FILTERS.forEach(function (f) {
        if (f.multi) {
          state[f.name] = [];
          each(form.querySelectorAll('input[name="' + f.name + '"]'), function (box) {
            if (box.checked && state[f.name].indexOf(box.value) < 0) state[f.name].push(box.value);
          });
        } else {
          state[f.name] = form.querySelector('select[name="' + f.name + '"]').value;
        }
      });
      return state;
    }

    function addCheckbox(name, value) {
      var fieldset = form.querySelector('fieldset[data-facet="' + name + '"]');
      if (!fieldset) return;
      added += 1;
      var id = 'f-' + name + '-url-' + added;
      var row = el('div', 'check');
      var box = el('input');
      box.type = 'checkbox';
      box.id = id;
      box.name = name;
      box.value = value;
      var label = el('label', null, value);
      label.htmlFor = id;
      row.appendChild(box);
      row.appendChild(label);
      fieldset.appendChild(row);
    }

    function writeForm(state) {
      search.value = state.q;
      FILTERS.forEach(function (f) {
        var value = state[f.name];
        if (f.multi) {
          var present = {};
          each(form.querySelectorAll('input[name="' + f.name + '"]'), function (box) {
            present[box.value] = true;
          });
          value.forEach(function (v) {
            if (!Object.prototype.hasOwnProperty.call(present, v)) addCheckbox(f.name, v);
          });
          each(form.querySelectorAll('input[name="' + f.name + '"]'), function (box) {
            box.checked = value.indexOf(box.value) >= 0;
          });
        } else {
          var select = form.querySelector('select[name="' + f.name + '"]');
          var known = false;
          each(select.options, function (option) {
            if (option.value === value) known = true;
          });
          if (!known) select.appendChild(new Option(value, value));
          select.value = value;
        }
      });
      each(form.querySelectorAll('details'), function (details) {
        if (details.querySelector('input:checked')) details.open = true;
      });
    }

    function toQuery(state) {
      var params = new URLSearchParams();
      if (state.q.trim() !== '') params.set('q', state.q);
      FILTERS.forEach(function (f) {
        if (f.multi) {
          state[f.name].forEach(function (v) { params.append(f.name, v); });
        } else if (state[f.name] !== '') {
          params.set(f.name, state[f.name]);
        }
      });
      if (state.page > 1) params.set('page', String(state.page));
      var query = params.toString();
      return query === '' ? '' : '?' + query;
    }

    function matches(agent, state, terms) {
      for (var i = 0; i < terms.length; i++) {
        if (agent.searchText.indexOf(terms[i]) < 0) return false;
      }
      for (var j = 0; j < FILTERS.length; j++) {
        var f = FILTERS[j];
        var chosen = state[f.name];
        if (f.multi ? chosen.length === 0 : chosen === '') continue;
        if (f.match === 'any' && !chosen.some(function (v) { return has(agent[f.field], v); })) return false;
        if (f.match === 'all' && !chosen.every(function (v) { return has(agent[f.field], v); })) return false;
        if (f.match === 'eq' && agent[f.field] !== chosen) return false;
        if (f.match === 'platform' && !(has(agent.platforms, chosen) || has(agent.deploy, 'npx') || has(agent.deploy, 'uvx'))) return false;
      }
      return true;
    }

    function card(agent) {
      var item = el('li', 'card');
      var head = el('div', 'card-head');
      var icon = el('span', 'icon ' + (/^i-[a-z][a-z0-9-]*$/.test(agent.icon) ? agent.icon : 'i-none'));
      icon.setAttribute('aria-hidden', 'true');
      if (agent.icon !== 'i-none') loadIcons(agent.position);
      var title = el('h2', 'card-title');
      var link = el('a', null, agent.name);
      if (AGENT_HREF.test(agent.href)) link.setAttribute('href', agent.href);
      title.appendChild(link);
      var version = el('span', 'version');
      version.appendChild(el('span', 'visually-hidden', 'Version '));
      version.appendChild(document.createTextNode(agent.version));
      head.appendChild(icon);
      head.appendChild(title);
      head.appendChild(version);
      item.appendChild(head);
      if (agent.quarantined) item.appendChild(el('p', 'badge badge-warn', 'Quarantined'));
      if (agent.deprecated) item.appendChild(el('p', 'badge badge-warn', 'Deprecated'));
      var state = Array.isArray(agent.verified) ? agent.verified[0] : undefined;
      if (VERIFICATION_STATES.indexOf(state) >= 0 && typeof agent.verified_label === 'string') {
        item.appendChild(el('p', 'badge badge-' + state, agent.verified_label));
      }
      item.appendChild(el('p', 'desc', agent.description));
      var facts = el('dl', 'facts');
      [
        ['Install', agent.deploy_text],
        ['Platforms', agent.platforms_text],
        ['Sign-in', agent.auth_text],
        ['License', agent.license || 'Not specified']
      ].forEach(function (pair) {
        var row = el('div');
        row.appendChild(el('dt', null, pair[0]));
        row.appendChild(el('dd', null, pair[1]));
        facts.appendChild(row);
      });
      item.appendChild(facts);
      if (Array.isArray(agent.tags) && agent.tags.length > 0) {
        var tags = el('ul', 'tags');
        tags.setAttribute('aria-label', 'Tags');
        agent.tags.forEach(function (tag) { tags.appendChild(el('li', null, tag)); });
        item.appendChild(tags);
      }
      return item;
    }

    function renderPager(state, pages) {
      ui.pager.textContent = '';
      if (pages <= 1) {
        ui.pager.hidden = true;
        return;
      }
      ui.pager.hidden = false;
      var items = el('ul');
      function link(text, page, rel) {
        var item = el('li');
        var anchor = el('a', null, text);
        var query = toQuery(Object.assign({}, state, { page: page }));
        anchor.setAttribute('href', query === '' ? window.location.pathname : query);
        anchor.setAttribute('data-page', String(page));
        if (page === state.page && !rel) anchor.setAttribute('aria-current', 'page');
        if (rel) anchor.setAttribute('rel', rel);
        item.appendChild(anchor);
        items.appendChild(item);
      }
      if (state.page > 1) link('Previous', state.page - 1, 'prev');
      var last = 0;
      for (var n = 1; n <= pages; n++) {
        if (n !== 1 && n !== pages && Math.abs(n - state.page) > 2) continue;
        if (n > last + 1) {
          var gap = el('li', 'gap', '…');
          gap.setAttribute('aria-hidden', 'true');
          items.appendChild(gap);
        }
        link(String(n), n, null);
        last = n;
      }
      if (state.page < pages) link('Next', state.page + 1, 'next');
      ui.pager.appendChild(items);
    }

    function render(state) {
      var terms = state.q.toLowerCase().split(/\s+/).filter(function (t) { return t !== ''; });
      var shown = agents.filter(function (agent) { return matches(agent, state, terms); });
      var pages = Math.max(1, Math.ceil(shown.length / pageSize));
      state.page = Math.min(state.page, pages);
      var first = (state.page - 1) * pageSize;
      var slice = shown.slice(first, first + pageSize);
      var fragment = document.createDocumentFragment();
      slice.forEach(function (agent) { fragment.appendChild(card(agent)); });
      ui.list.textContent = '';
      ui.list.appendChild(fragment);
      var filtered = shown.length !== agents.length;
      var total = agents.length + (agents.length === 1 ? ' agent' : ' agents');
      var text;
      if (shown.length === 0) {
        text = 'No agents match the search and filters (' + total + ' in total).';
      } else if (pages > 1) {
        text = 'Showing ' + (first + 1) + '–' + (first + slice.length) + ' of ' +
          (filtered ? shown.length + ' matching agents (' + total + ' in total)' : total);
      } else if (filtered) {
        text = 'Showing ' + shown.length + ' of ' + total;
      } else {
        text = total;
      }
      ui.count.textContent = text;
      renderPager(state, pages);
    }

    function commit(state, mode) {
      render(state);
      var query = toQuery(state);
      if (query !== window.location.search) {
        var url = query === '' ? window.location.pathname : query;
        if (mode === 'push') window.history.pushState(null, '', url);
        else window.history.replaceState(null, '', url);
      }
    }

    var state = readUrl();
    writeForm(state);
    form.hidden = false;
    commit(state, 'replace');

    form.addEventListener('submit', function (event) {
      event.preventDefault();
      typing = false;
    });
    search.addEventListener('input', function () {
      window.clearTimeout(timer);
      timer = window.setTimeout(function () {
        state = readForm(1);
        // One history entry per burst of typing.
        commit(state, typing ? 'replace' : 'push');
        typing = true;
      }, 150);
    });
    form.addEventListener('change', function (event) {
      if (event.target === search) return;
      typing = false;
      state = readForm(1);
      commit(state, 'push');
    });
    form.addEventListener('reset', function () {
      window.setTimeout(function () {
        typing = false;
        state = readForm(1);
        commit(state, 'push');
      }, 0);
    });
    ui.pager.addEventListener('click', function (event) {
      var anchor = event.target.closest('a[data-page]');
      if (!anchor || event.ctrlKey || event.metaKey || event.shiftKey || event.altKey) return;
      event.preventDefault();
      typing = false;
      state.page = parseInt(anchor.getAttribute('data-page'), 10) || 1;
      commit(state, 'push');
      ui.count.setAttribute('tabindex', '-1');
      ui.count.focus();
    });
    window.addEventListener('popstate', function () {
      typing = false;
      state = readUrl();
      writeForm(state);
      render(state);
    });
  }

  function init() {
    initCopy();
    initCatalogue();
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', init);
  else init();
})();
