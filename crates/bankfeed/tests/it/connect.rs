//! The loopback catcher of the hosted widget's redirect (docs/connect.md#from-a-script), driven as
//! the widget's browser drives it.

use std::time::Duration;

use bankfeed::connect::{widget_base, Catcher, ConnectOptions, ConnectUrl, Limits, Source};
use bankfeed::{Error, Secret};

const LOGIN_ID: &str = "8b35f6c8-e7b6-41d3-98f8-08d68b7f8d31";

fn browser() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder().build().expect("reqwest client")
}

#[tokio::test(flavor = "multi_thread")]
async fn the_redirect_is_caught_and_the_browser_told_to_close_the_tab() {
    let catcher = Catcher::start(&tokio::runtime::Handle::current()).unwrap();
    let url = catcher.url().to_owned();
    assert!(url.starts_with("http://127.0.0.1:") && url.len() > 60, "{url}");
    let http = browser();
    let port = url.trim_start_matches("http://127.0.0.1:").split('/').next().unwrap().to_owned();
    // Served before anyone waits: another path, and the path without a LoginId, are 404s.
    assert_eq!(http.get(format!("http://127.0.0.1:{port}/")).send().await.unwrap().status(), 404);
    assert_eq!(http.get(&url).send().await.unwrap().status(), 404);
    let page = http.get(format!("{url}?loginId={LOGIN_ID}&institution=FlinksCapital&accountId=a,b")).send();
    let (page, caught) = tokio::join!(page, catcher.wait(Duration::from_secs(10)));
    let page = page.unwrap();
    assert_eq!(page.status(), 200);
    assert!(page.text().await.unwrap().contains("You can close this tab"));
    let connection = caught.unwrap();
    assert_eq!(connection.login_id.expose(), LOGIN_ID);
    assert_eq!((connection.account_ids.len(), connection.source), (2, Source::Redirect));
    // Closed with its wait.
    assert!(http.get(&url).send().await.is_err());
}

#[tokio::test(flavor = "multi_thread")]
async fn the_event_is_caught_and_other_events_end_nothing() {
    let catcher = Catcher::start(&tokio::runtime::Handle::current()).unwrap();
    let url = catcher.url().to_owned();
    let http = browser();
    let mounted = http.post(&url).body(r#"{"step": "APP_MOUNTED"}"#).send().await.unwrap();
    assert_eq!(mounted.status(), 204);
    let event = format!(r#"{{"step": "REDIRECT", "loginId": "{LOGIN_ID}", "tag": "t"}}"#);
    let (sent, caught) = tokio::join!(http.post(&url).body(event).send(), catcher.wait(Duration::from_secs(10)));
    assert_eq!(sent.unwrap().status(), 204);
    let connection = caught.unwrap();
    assert_eq!((connection.tag.as_deref(), connection.source), (Some("t"), Source::Event));
}

#[tokio::test(flavor = "multi_thread")]
async fn nothing_caught_is_a_timeout_and_a_bad_login_id_a_config_error() {
    let catcher = Catcher::start(&tokio::runtime::Handle::current()).unwrap();
    let waited = catcher.wait(Duration::from_millis(100)).await;
    assert!(matches!(waited, Err(Error::ConnectTimeout { .. })), "{waited:?}");

    let catcher = Catcher::start(&tokio::runtime::Handle::current()).unwrap();
    let url = catcher.url().to_owned();
    let (page, caught) =
        tokio::join!(browser().get(format!("{url}?loginId=nope")).send(), catcher.wait(Duration::from_secs(10)));
    assert_eq!(page.unwrap().status(), 400);
    match caught {
        Err(Error::Config { field: "loginId", rule }) => assert!(!rule.contains("nope"), "{rule}"),
        other => panic!("{other:?}"),
    }
}

fn no_redirects() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().expect("reqwest client")
}

fn widget_url(catcher: &Catcher) -> ConnectUrl {
    let options = ConnectOptions { redirect_url: Some(catcher.url().to_owned()), ..ConnectOptions::default() };
    options.build(widget_base("toolbox").unwrap(), Some(Secret::new("tok-secret"))).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_launch_page_sends_the_browser_to_the_widget_once() {
    let catcher = Catcher::start(&tokio::runtime::Handle::current()).unwrap();
    let http = no_redirects();
    let widget = widget_url(&catcher);
    let launch = catcher.launch(&widget).to_owned();
    // The address a browser command is given holds neither the token nor the return path.
    assert!(!launch.contains("tok-secret") && !launch.contains(catcher.url()) && launch.len() > 60, "{launch}");
    assert_eq!(http.head(&launch).send().await.unwrap().status(), 405, "a HEAD takes nothing");
    let first = http.get(&launch).send().await.unwrap();
    assert_eq!(first.status(), 303);
    assert_eq!(first.headers()["location"], widget.reveal().as_str());
    assert_eq!(first.headers()["cache-control"], "no-store");
    let again = http.get(&launch).send().await.unwrap();
    assert_eq!(again.status(), 410);
    assert!(again.text().await.unwrap().contains("opened already"));
}

#[tokio::test(flavor = "multi_thread")]
async fn no_answer_lets_a_page_of_another_origin_read_it() {
    let catcher = Catcher::start(&tokio::runtime::Handle::current()).unwrap();
    let url = catcher.url().to_owned();
    let http = browser();
    let origin = "https://evil.example";
    let preflight = http
        .request(reqwest::Method::OPTIONS, &url)
        .header("origin", origin)
        .header("access-control-request-method", "POST")
        .header("access-control-request-headers", "content-type")
        .send()
        .await
        .unwrap();
    assert_eq!(preflight.status(), 405);
    let mounted = http.post(&url).header("origin", origin).body(r#"{"step": "APP_MOUNTED"}"#).send().await.unwrap();
    assert_eq!(mounted.status(), 204);
    for answer in [&preflight, &mounted] {
        assert!(!answer.headers().keys().any(|name| name.as_str().starts_with("access-control-")), "{answer:?}");
    }
    // Neither ended the wait.
    let waited = catcher.wait(Duration::from_millis(100)).await;
    assert!(matches!(waited, Err(Error::ConnectTimeout { .. })), "{waited:?}");
}

fn port_of(url: &str) -> u16 {
    url.trim_start_matches("http://127.0.0.1:").split('/').next().unwrap().parse().unwrap()
}

/// Reads until the catcher closes the connection; how long that took.
async fn closed_after(stream: &mut tokio::net::TcpStream) -> Duration {
    use tokio::io::AsyncReadExt;
    let started = tokio::time::Instant::now();
    let mut sink = [0u8; 1024];
    loop {
        let read = tokio::time::timeout(Duration::from_secs(10), stream.read(&mut sink))
            .await
            .expect("the catcher kept the connection open for 10 s");
        if !matches!(read, Ok(read) if read > 0) {
            return started.elapsed();
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_idle_or_slow_connection_is_closed_in_time() {
    use tokio::io::AsyncWriteExt;
    let limits = Limits {
        header_timeout: Duration::from_millis(300),
        connection_timeout: Duration::from_secs(1),
        max_connections: 4,
    };
    let catcher = Catcher::start_with(&tokio::runtime::Handle::current(), limits).unwrap();
    let port = port_of(catcher.url());
    // Nothing sent: closed at the header timeout.
    let mut idle = tokio::net::TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let waited = closed_after(&mut idle).await;
    assert!(waited < Duration::from_millis(900), "{waited:?}");
    // A head sent a byte at a time never completes: the same.
    let mut slow = tokio::net::TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let started = tokio::time::Instant::now();
    for byte in b"GET / HTTP/1.1\r\nHost: x\r\n" {
        if slow.write_all(&[*byte]).await.is_err() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // The whole head would take 2.6 s; the writes fail soon after the catcher closes.
    let waited = started.elapsed();
    assert!(waited < Duration::from_millis(1500), "{waited:?}");
    // A body that never comes whole: closed at the connection timeout.
    let mut stuck = tokio::net::TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let head = format!(
        "POST {} HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{{",
        catcher.url().trim_start_matches(&format!("http://127.0.0.1:{port}"))
    );
    stuck.write_all(head.as_bytes()).await.unwrap();
    let waited = closed_after(&mut stuck).await;
    assert!(waited < Duration::from_millis(1600), "{waited:?}");
    // And an answered request closes its connection: nothing idles after it.
    let mut answered = tokio::net::TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    answered.write_all(b"GET /favicon.ico HTTP/1.1\r\nHost: x\r\n\r\n").await.unwrap();
    let waited = closed_after(&mut answered).await;
    assert!(waited < Duration::from_millis(250), "{waited:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn connections_beyond_the_cap_wait_their_turn() {
    let limits = Limits {
        header_timeout: Duration::from_millis(500),
        connection_timeout: Duration::from_secs(5),
        max_connections: 2,
    };
    let catcher = Catcher::start_with(&tokio::runtime::Handle::current(), limits).unwrap();
    let url = catcher.url().to_owned();
    let port = port_of(&url);
    // Two idle connections take both places; the redirect waits until the first is timed out.
    let held: Vec<_> = [0, 1].map(|_| std::net::TcpStream::connect(("127.0.0.1", port)).unwrap()).into();
    tokio::time::sleep(Duration::from_millis(100)).await;
    let started = tokio::time::Instant::now();
    let page = browser().get(format!("{url}?loginId={LOGIN_ID}")).send();
    let (page, caught) = tokio::join!(page, catcher.wait(Duration::from_secs(10)));
    assert_eq!(page.unwrap().status(), 200);
    assert!(caught.is_ok());
    let waited = started.elapsed();
    assert!(waited >= Duration::from_millis(300) && waited < Duration::from_secs(3), "{waited:?}");
    drop(held);
}
