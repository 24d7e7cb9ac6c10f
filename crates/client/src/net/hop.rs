//! One hop of a request followed by hand: where a redirect leads (refusing loops and a missing
//! or broken `Location`), the method after it, and whether the bearer token goes along.

use reqwest::Method;
use url::Url;

use super::error::NetError;

/// A bearer token and the one origin (scheme, host, port) it may be sent to.
#[derive(Debug, Clone, Copy)]
pub struct Bearer<'a> {
    pub origin: &'a url::Origin,
    pub token: &'a str,
}

/// Where a response of `status` sends the request next: `None` when it is not a redirect, the
/// `Location` resolved against `current` when it is. A redirect without a usable `Location`,
/// or back to a URL in `seen`, is an error.
pub(super) fn redirect(
    current: &Url,
    status: u16,
    location: Option<&str>,
    seen: &[Url],
) -> Result<Option<Url>, NetError> {
    if !matches!(status, 301 | 302 | 303 | 307 | 308) {
        return Ok(None);
    }
    let next = location
        .and_then(|v| current.join(v).ok())
        .ok_or(NetError::BadRedirect)?;
    if seen.contains(&next) {
        return Err(NetError::RedirectLoop(next.to_string()));
    }
    Ok(Some(next))
}

/// The method of the hop after a redirect of `status`: a 303 turns anything but HEAD into GET.
pub(super) fn method_after(status: u16, method: Method) -> Method {
    if status == 303 && method != Method::HEAD {
        Method::GET
    } else {
        method
    }
}

/// The token to send to `current`: only when it is on the bearer's origin. Compared as parsed
/// origins: a URL that only starts with the API's text (`https://api.example@elsewhere/`,
/// `https://api.example.evil/`) is elsewhere.
pub(super) fn bearer_for<'a>(current: &Url, bearer: Option<Bearer<'a>>) -> Option<&'a str> {
    bearer
        .filter(|b| current.origin() == *b.origin)
        .map(|b| b.token)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(text: &str) -> Url {
        Url::parse(text).unwrap()
    }

    #[test]
    fn a_status_that_is_not_a_redirect_ends_the_hops_even_with_a_location() {
        let here = url("https://a.example/x");
        for status in [200, 304, 404, 500] {
            assert_eq!(redirect(&here, status, Some("/y"), &[]).unwrap(), None);
        }
    }

    #[test]
    fn a_location_is_resolved_against_the_url_that_answered() {
        let here = url("https://a.example/dir/x");
        for status in [301, 302, 303, 307, 308] {
            let next = redirect(&here, status, Some("y?q=1"), &[]).unwrap();
            assert_eq!(next, Some(url("https://a.example/dir/y?q=1")), "{status}");
        }
        let elsewhere = redirect(&here, 302, Some("https://b.example/z"), &[]).unwrap();
        assert_eq!(elsewhere, Some(url("https://b.example/z")));
    }

    #[test]
    fn a_redirect_without_a_usable_location_is_a_bad_redirect() {
        let here = url("https://a.example/x");
        assert_eq!(redirect(&here, 302, None, &[]), Err(NetError::BadRedirect));
        assert_eq!(
            redirect(&here, 302, Some("https://[::1"), &[]),
            Err(NetError::BadRedirect)
        );
    }

    #[test]
    fn a_redirect_back_to_a_visited_url_is_a_loop() {
        let here = url("https://a.example/x");
        let seen = [url("https://a.example/start"), here.clone()];
        assert_eq!(
            redirect(&here, 301, Some("/start"), &seen),
            Err(NetError::RedirectLoop("https://a.example/start".into()))
        );
    }

    #[test]
    fn only_a_303_turns_the_next_hop_into_a_get_and_never_a_head() {
        assert_eq!(method_after(303, Method::POST), Method::GET);
        assert_eq!(method_after(303, Method::HEAD), Method::HEAD);
        for status in [301, 302, 307, 308] {
            assert_eq!(method_after(status, Method::POST), Method::POST, "{status}");
            assert_eq!(method_after(status, Method::HEAD), Method::HEAD, "{status}");
        }
    }

    #[test]
    fn the_token_goes_only_to_hops_on_its_own_origin() {
        let origin = url("https://api.example/").origin();
        let bearer = Some(Bearer {
            origin: &origin,
            token: "secret",
        });
        assert_eq!(
            bearer_for(&url("https://api.example/repos/x"), bearer),
            Some("secret")
        );
        for elsewhere in [
            "https://api.example@elsewhere.example/",
            "https://api.example.evil/",
            "https://api.example:8443/",
            "http://api.example/",
            "https://objects.example/asset",
        ] {
            assert_eq!(bearer_for(&url(elsewhere), bearer), None, "{elsewhere}");
        }
        assert_eq!(bearer_for(&url("https://api.example/"), None), None);
    }
}
