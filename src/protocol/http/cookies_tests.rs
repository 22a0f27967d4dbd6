use reqwest::cookie::CookieStore as _;

use super::*;

fn url(text: &str) -> Url {
    Url::parse(text).expect("a test URL")
}

/// `jar` given the `Set-Cookie` values from `from`.
fn set(jar: &CookieJar, from: &str, values: &[String]) {
    let headers: Vec<HeaderValue> = values
        .iter()
        .map(|v| HeaderValue::from_str(v).expect("a header value"))
        .collect();
    jar.0.set_cookies(&mut headers.iter(), &url(from));
}

/// The `Cookie` header `jar` sends to `to`, split into its `name=value` pairs.
fn sent(jar: &CookieJar, to: &str) -> Vec<String> {
    let value = jar.0.cookies(&url(to));
    let text = value.map(|v| v.to_str().unwrap_or_default().to_string());
    let mut pairs: Vec<String> = text
        .unwrap_or_default()
        .split("; ")
        .filter(|p| !p.is_empty())
        .map(str::to_string)
        .collect();
    pairs.sort();
    pairs
}

fn small() -> CookieJar {
    CookieJar::with_limits(CookieLimits {
        per_domain: 3,
        total: 5,
        cookie_bytes: 64,
    })
}

#[test]
fn a_domain_keeps_its_bound_of_cookies_and_the_rest_are_refused() {
    let jar = small();
    let values: Vec<String> = (0..10).map(|i| format!("c{i}=v; Path=/")).collect();
    set(&jar, "http://greedy.test/", &values);
    assert_eq!(sent(&jar, "http://greedy.test/"), ["c0=v", "c1=v", "c2=v"]);
    assert_eq!((jar.len(), jar.refused()), (3, 7));
    // A cookie already kept is still updated.
    set(&jar, "http://greedy.test/", &["c1=new; Path=/".to_string()]);
    assert_eq!(
        sent(&jar, "http://greedy.test/"),
        ["c0=v", "c1=new", "c2=v"]
    );
    assert_eq!((jar.len(), jar.refused()), (3, 7));
}

#[test]
fn the_jar_keeps_its_bound_in_all_across_sites() {
    let jar = small();
    for host in ["a.test", "b.test", "c.test"] {
        let values: Vec<String> = (0..2).map(|i| format!("c{i}=v")).collect();
        set(&jar, &format!("http://{host}/"), &values);
    }
    assert_eq!(jar.len(), 5);
    assert_eq!(jar.refused(), 1);
    assert_eq!(sent(&jar, "http://c.test/"), ["c0=v"]);
}

#[test]
fn a_cookie_over_its_bound_in_bytes_is_refused() {
    let jar = small();
    let big = format!("big={}", "x".repeat(64));
    set(&jar, "http://a.test/", &[big, "small=v".to_string()]);
    assert_eq!(sent(&jar, "http://a.test/"), ["small=v"]);
    assert_eq!(jar.refused(), 1);
}

#[test]
fn a_cookie_deleted_or_expired_makes_room() {
    let jar = small();
    let values: Vec<String> = (0..3).map(|i| format!("c{i}=v")).collect();
    set(&jar, "http://a.test/", &values);
    set(&jar, "http://a.test/", &["c0=; Max-Age=0".to_string()]);
    assert_eq!(jar.len(), 2);
    set(&jar, "http://a.test/", &["c3=v".to_string()]);
    assert_eq!(sent(&jar, "http://a.test/"), ["c1=v", "c2=v", "c3=v"]);
    // Two of them expire (a date in the past is taken as deleting them at once; an expiry by
    // time is swept when room is needed).
    let past = "Expires=Thu, 01 Jan 1970 00:00:00 GMT";
    let expired: Vec<String> = ["c1", "c2"].map(|c| format!("{c}=v; {past}")).to_vec();
    set(&jar, "http://a.test/", &expired);
    set(
        &jar,
        "http://a.test/",
        &["c4=v".to_string(), "c5=v".to_string()],
    );
    assert_eq!(sent(&jar, "http://a.test/"), ["c3=v", "c4=v", "c5=v"]);
    assert_eq!(jar.refused(), 0);
}

#[test]
fn a_domain_cookie_is_sent_across_its_site_and_nowhere_else() {
    let jar = CookieJar::new();
    let values = [
        "shared=1; Domain=site.test".to_string(),
        "own=2".to_string(),
    ];
    set(&jar, "http://a.site.test/", &values);
    assert_eq!(sent(&jar, "http://a.site.test/x"), ["own=2", "shared=1"]);
    assert_eq!(sent(&jar, "http://b.site.test/"), ["shared=1"]);
    assert!(sent(&jar, "http://other.test/").is_empty());
    assert!(sent(&jar, "http://127.0.0.1/").is_empty());
}

#[test]
fn refusals_are_logged_at_warn_level_on_powers_of_ten() {
    let warned: Vec<u64> = (1..=1000).filter(|&n| is_power_of_ten(n)).collect();
    assert_eq!(warned, [1, 10, 100, 1000]);
}
