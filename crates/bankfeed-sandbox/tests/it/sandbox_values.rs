//! Values typed clients and fixtures notice (docs/sandbox.md#lastrefresh-loginids-and-languages):
//! the summary's `Tag` and links, `LastRefresh` moving with each live refresh, the prompts of
//! `Language: "fr"`, and the refusal of a language the service does not offer.

use serde_json::{json, Value};

use bankfeed_sandbox::{users, SandboxConfig};

use crate::common::{
    answers_for, assert_error, assert_message_names, challenges, user, Api, Reply, AUTHORIZE, INSTITUTION, SUMMARY,
};

fn config() -> SandboxConfig {
    SandboxConfig { pending_polls: 0, ..SandboxConfig::default() }
}

fn credentials(username: &str, extra: &Value) -> Value {
    let mut body = json!({"Institution": INSTITUTION, "Username": username, "Password": "Everyday",
                          "MostRecentCached": false, "Save": true});
    for (key, value) in extra.as_object().expect("an object") {
        body[key] = value.clone();
    }
    body
}

/// Logs `username` in (answering its challenges in English) with `extra` fields; the 200.
async fn login(api: &Api, username: &str, extra: &Value) -> Value {
    let user = user(username);
    let mut reply = api.post(AUTHORIZE, credentials(username, extra)).await;
    while reply.0 == 203 {
        let responses = answers_for(&user, &reply.1);
        reply = api.post(AUTHORIZE, json!({"RequestId": reply.1["RequestId"], "SecurityResponses": responses})).await;
    }
    assert_eq!(reply.0, 200, "{}", reply.1);
    reply.1
}

fn last_refresh(reply: &Value) -> String {
    reply["Login"]["LastRefresh"].as_str().expect("LastRefresh").to_owned()
}

#[tokio::test]
async fn the_summary_echoes_the_tag_and_carries_the_documented_links() {
    let api = Api::with(config());
    let opened = login(&api, "greatday_nomfa", &json!({"Tag": "userId=42"})).await;
    let (status, summary) = api.post(SUMMARY, json!({"RequestId": opened["RequestId"]})).await;
    assert_eq!(status, 200, "{summary}");
    assert_eq!(summary["Tag"], "userId=42");
    assert_eq!(
        summary["Links"],
        json!([{"rel": "AccountsDetail", "href": "/GetAccountsDetail", "example": null},
               {"rel": "Statements", "href": "/GetStatements", "example": null}])
    );
    // A session opened without a Tag has none to echo.
    let cached = api.cached(opened["Login"]["Id"].as_str().unwrap()).await;
    let (_, untagged) = api.post(SUMMARY, json!({"RequestId": cached.1["RequestId"]})).await;
    assert!(untagged.get("Tag").is_none(), "{untagged}");
}

#[tokio::test]
async fn last_refresh_moves_with_each_live_refresh_and_cached_reads_report_the_last() {
    let api = Api::with(config());
    let first = login(&api, "greatday_nomfa", &json!({})).await;
    let login_id = first["Login"]["Id"].as_str().unwrap().to_owned();
    // A connection's first refresh is the fixed as-of time, so first answers are reproducible.
    assert_eq!(last_refresh(&first), "2026-11-20T08:15:42.1234567");
    assert_eq!(last_refresh(&api.cached(&login_id).await.1), last_refresh(&first), "a cached read refreshes nothing");

    let live = api.post(AUTHORIZE, json!({"LoginId": login_id, "MostRecentCached": false})).await;
    assert_eq!(live.0, 200, "{}", live.1);
    let refreshed = last_refresh(&live.1);
    assert!(refreshed > last_refresh(&first), "{refreshed} after a live refresh");
    assert_eq!(refreshed.len(), "2026-11-20T08:15:42.1234567".len(), "seven fractional digits, no zone");
    let cached = api.cached(&login_id).await;
    assert_eq!(last_refresh(&cached.1), refreshed, "a cached read reports the last refresh");
    let (_, summary) = api.post(SUMMARY, json!({"RequestId": cached.1["RequestId"]})).await;
    assert_eq!(last_refresh(&summary), refreshed, "and so do its data answers");

    let again = login(&api, "greatday_nomfa", &json!({})).await;
    assert_eq!(again["Login"]["Id"], json!(login_id));
    assert!(last_refresh(&again) > refreshed, "a live login with credentials refreshes too");
}

/// The French prompts of Greatday's questions, as docs/sandbox.md#users lists them.
const GREATDAY_FR: [&str; 3] =
    ["Dans quelle ville êtes-vous né?", "Quel est le meilleur pays au monde?", "Quelle forme les gens préfèrent-ils?"];

/// Walks `username`'s flow in two sandboxes of the same seed, one in English and one in
/// `Language: "fr"`, answering the French one with the documented answers keyed by the French
/// prompts; returns the French prompts asked.
async fn french_flow(username: &str) -> Vec<String> {
    let (english, french) = (Api::with(config()), Api::with(config()));
    let user = user(username);
    let mut en = english.post(AUTHORIZE, credentials(username, &json!({"Language": "en"}))).await;
    let mut fr = french.post(AUTHORIZE, credentials(username, &json!({"Language": "fr"}))).await;
    if user.username == "mfa_trusted_device" {
        let open = |reply: &Reply| json!({"LoginId": reply.1["Login"]["Id"], "MostRecentCached": false});
        en = english.post(AUTHORIZE, open(&en)).await;
        fr = french
            .post(
                AUTHORIZE,
                json!({"Language": "fr"})
                    .as_object()
                    .unwrap()
                    .clone()
                    .into_iter()
                    .chain(open(&fr).as_object().unwrap().clone())
                    .collect::<serde_json::Map<_, _>>()
                    .into(),
            )
            .await;
    }
    let mut asked = Vec::new();
    while en.0 == 203 {
        assert_eq!(fr.0, 203, "{}", fr.1);
        let english_answers = answers_for(&user, &en.1);
        let mut responses = serde_json::Map::new();
        for (en_challenge, fr_challenge) in challenges(&en.1).iter().zip(challenges(&fr.1)) {
            let (en_prompt, fr_prompt) =
                (en_challenge["Prompt"].as_str().unwrap(), fr_challenge["Prompt"].as_str().unwrap());
            assert_ne!(en_prompt, fr_prompt, "{username}: the prompt is translated");
            assert_eq!(en_challenge["Iterables"], fr_challenge["Iterables"], "choices stay as they are");
            asked.push(fr_prompt.to_owned());
            // Keyed by the prompt, or (TextOrCall) by a choice, which stays as it is.
            for (key, answer) in english_answers.as_object().unwrap() {
                let key = if key == en_prompt { fr_prompt } else { key.as_str() };
                if key == fr_prompt || strings_contain(&fr_challenge["Iterables"], key) {
                    responses.insert(key.to_owned(), answer.clone());
                }
            }
        }
        let next_en = json!({"RequestId": en.1["RequestId"], "SecurityResponses": english_answers});
        en = english.post(AUTHORIZE, next_en).await;
        fr = french.post(AUTHORIZE, json!({"RequestId": fr.1["RequestId"], "SecurityResponses": responses})).await;
    }
    assert_eq!(en.0, 200, "{}", en.1);
    assert_eq!(fr.0, 200, "{username}: the documented answers open the French session: {}", fr.1);
    asked
}

fn strings_contain(value: &Value, key: &str) -> bool {
    value.as_array().is_some_and(|items| items.iter().any(|item| item == key))
}

#[tokio::test]
async fn language_fr_asks_every_public_test_users_prompts_in_french() {
    let asked = french_flow("Greatday").await;
    assert_eq!(asked.len(), 1, "one question per login");
    assert!(GREATDAY_FR.contains(&asked[0].as_str()), "{asked:?}");
    assert_eq!(french_flow("greatday_three_rounds").await, GREATDAY_FR);
    for user in users() {
        let flows = user.challenge_types.len();
        if flows > 0 && !["Greatday", "greatday_three_rounds"].contains(&user.username) {
            assert!(!french_flow(user.username).await.is_empty(), "{}", user.username);
        }
    }
}

#[tokio::test]
async fn an_unsupported_language_is_refused_naming_the_field() {
    let api = Api::with(config());
    for language in [json!("de"), json!("fr-CA"), json!(1)] {
        let reply = api.post(AUTHORIZE, credentials("Greatday", &json!({"Language": language}))).await;
        assert_error(&reply, 401, "INVALID_REQUEST");
        assert_message_names(&reply, "Language");
    }
    // Both documented values, in any case, and an empty one (the default) are taken.
    for language in ["EN", "Fr", ""] {
        let reply = api.post(AUTHORIZE, credentials("Greatday", &json!({"Language": language}))).await;
        assert_eq!(reply.0, 203, "{language}: {}", reply.1);
    }
}
