//! What makes the viewer safe to run beside a browser that visits other
//! sites: every request passes [`check`] before any page is made.
//!
//! - The Host header must name the loopback address and the port bound
//!   (`127.0.0.1:PORT` or `localhost:PORT`): a page of another site whose
//!   name was made to resolve to 127.0.0.1 (DNS rebinding) is refused.
//! - The printed URL carries a token made at start; the first request that
//!   shows it within [`TOKEN_LIFETIME`] gets a cookie (HttpOnly,
//!   SameSite=Strict) and the token is spent. Every later request needs the
//!   cookie.
//! - A write (POST) must come from the viewer's own origin (the Origin
//!   header, and `Sec-Fetch-Site` where the browser sends it) and carry
//!   the form key of its pages.
//! - Every answer says: no script, no outside asset, no framing, no
//!   referrer to another site, no cache ([`CSP`]).

use std::sync::Mutex;
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::header::{self, HeaderMap, HeaderValue};
use axum::http::{Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::Ui;

/// How long the printed URL works, unused.
pub const TOKEN_LIFETIME: Duration = Duration::from_secs(60);

/// The Content-Security-Policy of every answer: the viewer's own style
/// sheet and nothing else (no script at all, no form sent elsewhere).
pub const CSP: &str = "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/// The secrets of one start of the viewer.
pub struct Guard {
    port: u16,
    /// The printed URL's token and when it was made; `None` once spent.
    token: Mutex<Option<(String, Instant)>>,
    /// The cookie's value.
    cookie: String,
    /// The hidden field every form of the viewer carries.
    pub form_key: String,
}

/// Why a request was refused, for the person who made it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// The Host header names another host or port.
    Host,
    /// Neither the cookie nor an unspent token.
    NoCookie,
    /// A token that was spent, expired or never made.
    SpentToken,
    /// A write from another origin, or without the form key.
    Origin,
    /// A method the viewer does not answer.
    Method,
}

impl Refusal {
    fn status(self) -> StatusCode {
        match self {
            Refusal::Host => StatusCode::MISDIRECTED_REQUEST,
            Refusal::Method => StatusCode::METHOD_NOT_ALLOWED,
            Refusal::NoCookie | Refusal::SpentToken | Refusal::Origin => StatusCode::FORBIDDEN,
        }
    }

    /// What the refusal page says.
    pub fn text(self) -> &'static str {
        match self {
            Refusal::Host => {
                "refused: this viewer answers only to 127.0.0.1 and localhost on its own port"
            }
            Refusal::NoCookie => {
                "refused: open the link `goldfish ui` printed (it works once, for a minute); run `goldfish ui` again for a new one"
            }
            Refusal::SpentToken => {
                "refused: this link was used already or is more than a minute old; run `goldfish ui` again for a new one"
            }
            Refusal::Origin => "refused: a change must come from a page of this viewer",
            Refusal::Method => "refused: the viewer answers GET and POST only",
        }
    }
}

impl Guard {
    /// New secrets for a viewer bound to `port`.
    pub fn new(port: u16) -> Result<Guard, getrandom::Error> {
        Ok(Guard {
            port,
            token: Mutex::new(Some((secret()?, Instant::now()))),
            cookie: secret()?,
            form_key: secret()?,
        })
    }

    /// The URL to print: the token in its query.
    pub fn url(&self) -> String {
        let token = lock(&self.token)
            .as_ref()
            .map(|(token, _)| token.clone())
            .unwrap_or_default();
        format!("http://127.0.0.1:{}/?token={token}", self.port)
    }

    fn cookie_name(&self) -> String {
        // Browsers share cookies between the ports of a host: two viewers
        // at once must not replace each other's.
        format!("goldfish_ui_{}", self.port)
    }

    fn host_allowed(&self, headers: &HeaderMap) -> bool {
        let Some(host) = headers.get(header::HOST).and_then(|h| h.to_str().ok()) else {
            return false;
        };
        host == format!("127.0.0.1:{}", self.port) || host == format!("localhost:{}", self.port)
    }

    fn origin_allowed(&self, headers: &HeaderMap) -> bool {
        let origin = headers.get(header::ORIGIN).and_then(|h| h.to_str().ok());
        let own = origin.is_some_and(|origin| {
            origin == format!("http://127.0.0.1:{}", self.port)
                || origin == format!("http://localhost:{}", self.port)
        });
        let site = headers.get("sec-fetch-site").and_then(|h| h.to_str().ok());
        own && site.is_none_or(|site| site == "same-origin")
    }

    fn has_cookie(&self, headers: &HeaderMap) -> bool {
        let name = self.cookie_name();
        headers
            .get_all(header::COOKIE)
            .iter()
            .filter_map(|value| value.to_str().ok())
            .flat_map(|value| value.split(';'))
            .filter_map(|pair| pair.trim().split_once('='))
            .any(|(key, value)| key == name && same(value, &self.cookie))
    }

    /// Spends the token when `given` is it and still fresh at `now`.
    fn spend(&self, given: &str, now: Instant) -> bool {
        let mut token = lock(&self.token);
        let fresh = token.as_ref().is_some_and(|(token, made)| {
            same(given, token) && now.saturating_duration_since(*made) <= TOKEN_LIFETIME
        });
        if fresh {
            *token = None;
        }
        fresh
    }

    /// Whether the form key a write carries is this viewer's.
    pub fn form_key_ok(&self, given: &str) -> bool {
        same(given, &self.form_key)
    }

    fn set_cookie(&self) -> HeaderValue {
        let value = format!(
            "{}={}; HttpOnly; SameSite=Strict; Path=/",
            self.cookie_name(),
            self.cookie
        );
        HeaderValue::from_str(&value).expect("hex and ASCII")
    }
}

/// The token a URL's query carries, if any.
fn token_in(query: Option<&str>) -> Option<&str> {
    query?
        .split('&')
        .filter_map(|pair| pair.split_once('='))
        .find(|(key, _)| *key == "token")
        .map(|(_, value)| value)
}

/// Admits a request or refuses it (see the module's comment); adds the
/// security headers to every answer.
pub async fn check(State(ui): State<std::sync::Arc<Ui>>, request: Request, next: Next) -> Response {
    let guard = &ui.guard;
    let headers = request.headers();
    let refused = |refusal: Refusal| secured(refusal_page(refusal));
    if !guard.host_allowed(headers) {
        return refused(Refusal::Host);
    }
    let method = request.method().clone();
    if method != Method::GET && method != Method::HEAD && method != Method::POST {
        return refused(Refusal::Method);
    }
    if let Some(given) = token_in(request.uri().query()) {
        if method != Method::GET || !guard.spend(given, Instant::now()) {
            return refused(Refusal::SpentToken);
        }
        // The token leaves the address bar and the history at once.
        let mut answer = Response::new(Body::empty());
        *answer.status_mut() = StatusCode::SEE_OTHER;
        let path = request.uri().path();
        let location = HeaderValue::from_str(path).unwrap_or(HeaderValue::from_static("/"));
        answer.headers_mut().insert(header::LOCATION, location);
        answer
            .headers_mut()
            .insert(header::SET_COOKIE, guard.set_cookie());
        return secured(answer);
    }
    if !guard.has_cookie(headers) {
        return refused(Refusal::NoCookie);
    }
    if method == Method::POST && !guard.origin_allowed(headers) {
        return refused(Refusal::Origin);
    }
    secured(next.run(request).await)
}

/// A refusal as a page.
pub fn refusal_page(refusal: Refusal) -> Response {
    let page = super::pages::refused(refusal.text());
    (refusal.status(), page).into_response()
}

/// `answer` with the headers every answer carries.
fn secured(mut answer: Response) -> Response {
    let headers = answer.headers_mut();
    let set = |headers: &mut HeaderMap, name: &'static str, value: &'static str| {
        headers.insert(name, HeaderValue::from_static(value));
    };
    set(headers, "content-security-policy", CSP);
    set(headers, "x-content-type-options", "nosniff");
    set(headers, "x-frame-options", "DENY");
    // Not `no-referrer`: with it a browser sends `Origin: null` on the
    // viewer's own form posts. Nothing leaves for another site anyway.
    set(headers, "referrer-policy", "same-origin");
    set(headers, "cache-control", "no-store");
    set(headers, "cross-origin-opener-policy", "same-origin");
    set(headers, "cross-origin-resource-policy", "same-origin");
    answer
}

/// 32 random bytes as hex.
fn secret() -> Result<String, getrandom::Error> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Whether two secrets are equal, in time independent of where they differ.
fn same(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_is_spent_once_and_secrets_compare_whole() {
        let guard = Guard::new(4000).unwrap();
        let url = guard.url();
        let token = url.split("token=").nth(1).unwrap().to_owned();
        assert_eq!(token.len(), 64);
        let now = Instant::now();
        assert!(!guard.spend("nope", now));
        let late = now + TOKEN_LIFETIME + Duration::from_secs(1);
        assert!(!guard.spend(&token, late), "a minute old");
        assert!(guard.spend(&token, now));
        assert!(!guard.spend(&token, now), "spent");
        assert!(same("abc", "abc") && !same("abc", "abd") && !same("abc", "ab"));
        assert_eq!(token_in(Some("a=1&token=xy")), Some("xy"));
        assert_eq!(token_in(Some("tokens=xy")), None);
    }

    #[test]
    fn only_the_own_host_and_origin_pass() {
        let guard = Guard::new(4000).unwrap();
        let headers = |pairs: &[(&'static str, &'static str)]| {
            let mut map = HeaderMap::new();
            for (k, v) in pairs {
                map.insert(*k, HeaderValue::from_static(v));
            }
            map
        };
        assert!(guard.host_allowed(&headers(&[("host", "127.0.0.1:4000")])));
        assert!(guard.host_allowed(&headers(&[("host", "localhost:4000")])));
        assert!(!guard.host_allowed(&headers(&[("host", "evil.example:4000")])));
        assert!(!guard.host_allowed(&headers(&[("host", "127.0.0.1:4001")])));
        assert!(!guard.host_allowed(&headers(&[])));
        assert!(guard.origin_allowed(&headers(&[("origin", "http://127.0.0.1:4000")])));
        assert!(!guard.origin_allowed(&headers(&[("origin", "http://evil.example")])));
        assert!(!guard.origin_allowed(&headers(&[("origin", "null")])));
        assert!(!guard.origin_allowed(&headers(&[])));
        assert!(!guard.origin_allowed(&headers(&[
            ("origin", "http://127.0.0.1:4000"),
            ("sec-fetch-site", "cross-site")
        ])));
    }
}
