//! The loopback catcher of the hosted widget's redirect (docs/connect.md#from-a-script), driven as
//! the widget's browser drives it.

use std::time::Duration;

use bankfeed::connect::{Catcher, Source};
use bankfeed::Error;

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
