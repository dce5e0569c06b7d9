//! Answering challenges: each kind of question and its rules, the image selection.

use super::*;

#[tokio::test]
async fn answer_errors() {
    let api = Api::new();
    let unknown = uuid::Uuid::new_v4().to_string();
    let reply = api.answer(&unknown, json!({"What city were you born in?": ["Montreal"]})).await;
    assert_error(&reply, 400, "SESSION_NONEXISTENT");
    assert!(reply.1.get("RequestId").is_none(), "an unknown RequestId is not echoed");

    let reply = api.authorize(json!({"RequestId": unknown})).await;
    assert_error(&reply, 401, "INVALID_REQUEST");
    assert_message_names(&reply, "SecurityResponses");

    let challenge = api.credentials("mfa_three_questions", false).await;
    let id = request_id(&challenge);
    let reply =
        api.answer(&id, json!({"What city were you born in?": ["Montreal"], "What is your name?": ["Bob"]})).await;
    assert_error(&reply, 401, "UNKNOWN_CHALLENGE_KEY");
    assert_message_names(&reply, "What is your name?");
    assert_eq!(reply.1["RequestId"], id.as_str());

    // Prompts are keys verbatim: a re-cased prompt is not one.
    let reply = api
        .answer(&id, json!({"what city were you born in?": ["Montreal"], "What is the best country on earth?": ["Canada"], "What shape do people like most?": ["Triangle"]}))
        .await;
    assert_error(&reply, 401, "UNKNOWN_CHALLENGE_KEY");

    let reply = api
        .answer(
            &id,
            json!({"What city were you born in?": ["Montreal"], "What is the best country on earth?": ["Canada"]}),
        )
        .await;
    assert_error(&reply, 401, "SECURITYRESPONSES_INCOMPLETE");
    assert_message_names(&reply, "What shape do people like most?");
    assert_eq!(reply.1["RequestId"], id.as_str());

    let all = |shape: &str| json!({"What city were you born in?": ["Montreal"], "What is the best country on earth?": ["Canada"], "What shape do people like most?": [shape]});
    let reply = api.answer(&id, all("Circle")).await;
    assert_error(&reply, 401, "INVALID_SECURITY_RESPONSE");
    assert_eq!(reply.1["RequestId"], id.as_str());
    let reply = api.answer(&id, json!({"What city were you born in?": "Montreal", "What is the best country on earth?": ["Canada"], "What shape do people like most?": ["Triangle"]})).await;
    assert_error(&reply, 401, "INVALID_REQUEST");
    // The challenge stays pending after a wrong answer: try again.
    let done = api.answer(&id, all("triangle")).await;
    assert_eq!(done.0, 200, "{}", done.1);

    assert_error(&api.answer(&id, all("Triangle")).await, 400, "ALREADY_AUTHORIZED");
    let cached = api.login("greatday_nomfa", false).await;
    let reply = api.answer(cached["RequestId"].as_str().unwrap(), json!({"x": ["y"]})).await;
    assert_error(&reply, 400, "ALREADY_AUTHORIZED");
    assert_eq!(reply.1["RequestId"], cached["RequestId"]);
}

#[tokio::test]
async fn three_questions_come_in_one_round() {
    let api = Api::new();
    let reply = api.credentials("mfa_three_questions", false).await;
    assert_eq!(reply.0, 203);
    assert_eq!(
        prompts(&reply.1),
        ["What city were you born in?", "What is the best country on earth?", "What shape do people like most?"]
    );
    assert!(challenges(&reply.1).iter().all(|c| c["Type"] == "QuestionAndAnswer" && c.get("Iterables").is_none()));
    let done = api.complete("mfa_three_questions", reply).await;
    assert_eq!(done["HttpStatusCode"], 200);
}

#[tokio::test]
async fn securid_code_comes_before_the_question() {
    let api = Api::new();
    let first = api.credentials("mfa_securid", false).await;
    let id = request_id(&first);
    assert_eq!(prompts(&first.1), ["Enter the 6-digit security code from your SecurID token"]);
    let code = "Enter the 6-digit security code from your SecurID token";
    assert_error(&api.answer(&id, json!({code: ["654321"]})).await, 401, "INVALID_SECURITY_RESPONSE");
    let second = api.answer(&id, json!({code: ["123456"]})).await;
    assert_eq!(prompts(&second.1), ["What city were you born in?"]);
    assert_eq!(api.answer(&id, json!({"What city were you born in?": ["Montreal"]})).await.0, 200);
}

/// A sandbox that takes any number of wrong answers on one RequestId, so a test can try every
/// wrong shape of an answer in turn (the default ends the session at the third).
fn patient_api() -> Api {
    Api::with(SandboxConfig { max_wrong_answers: u32::MAX, ..SandboxConfig::default() })
}

#[tokio::test]
async fn multiple_choice_takes_exactly_the_right_choice() {
    let api = patient_api();
    let first = api.credentials("mfa_multiple_choice", false).await;
    let id = request_id(&first);
    let prompt = "Which of these streets have you lived on?";
    assert_eq!(
        first.1["SecurityChallenges"],
        json!([{"Type": "MultipleChoice", "Prompt": prompt,
                "Iterables": ["Rue Sherbrooke", "Maple Avenue", "Elm Street", "None of the above"]}])
    );
    for wrong in [json!(["Elm Street"]), json!(["Maple Avenue", "Elm Street"]), json!(["Main Street"]), json!([])] {
        assert_error(&api.answer(&id, json!({prompt: wrong})).await, 401, "INVALID_SECURITY_RESPONSE");
    }
    assert_eq!(api.answer(&id, json!({prompt: ["Maple Avenue"]})).await.0, 200);
}

#[tokio::test]
async fn multiple_answers_must_match_as_a_set() {
    let api = patient_api();
    let first = api.credentials("mfa_multiple_answers", false).await;
    let id = request_id(&first);
    let prompt = "Which of these cards do you hold?";
    let challenge = &challenges(&first.1)[0];
    assert_eq!(challenge["Type"], "MultipleChoiceMultipleAnswers");
    assert_eq!(strings(&challenge["Iterables"]), ["Visa Infinite", "Mastercard World", "Amex Gold", "Visa Classic"]);
    for wrong in [
        json!(["Visa Infinite"]),
        json!(["Visa Infinite", "Amex Gold", "Visa Classic"]),
        json!(["Amex Gold", "Visa Classic"]),
    ] {
        assert_error(&api.answer(&id, json!({prompt: wrong})).await, 401, "INVALID_SECURITY_RESPONSE");
    }
    assert_eq!(api.answer(&id, json!({prompt: ["Amex Gold", "Visa Infinite"]})).await.0, 200);
}

#[tokio::test]
async fn text_or_call_is_keyed_by_the_chosen_number() {
    let api = patient_api();
    let prompt = "How would you like to receive your security code?";
    for (choice, how) in [("(514) 555-0101", "Text"), ("(438) 555-0199", "Call"), ("(438) 555-0199", "text")] {
        let first = api.credentials("mfa_text_or_call", false).await;
        let id = request_id(&first);
        assert_eq!(
            first.1["SecurityChallenges"],
            json!([{"Type": "TextOrCall", "Prompt": prompt, "Iterables": ["(514) 555-0101", "(438) 555-0199"]}])
        );
        let reply = api.answer(&id, json!({prompt: ["Text"]})).await;
        assert_error(&reply, 401, "UNKNOWN_CHALLENGE_KEY");
        assert_message_names(&reply, prompt);
        assert_error(&api.answer(&id, json!({choice: ["Email"]})).await, 401, "INVALID_SECURITY_RESPONSE");
        assert_error(
            &api.answer(&id, json!({"(514) 555-0101": ["Text"], "(438) 555-0199": ["Call"]})).await,
            401,
            "INVALID_SECURITY_RESPONSE",
        );
        let second = api.answer(&id, json!({choice: [how]})).await;
        assert_eq!(second.0, 203);
        assert_eq!(prompts(&second.1), ["Enter the security code we sent you"]);
        assert_eq!(challenges(&second.1)[0]["Type"], "QuestionAndAnswer");
        assert_error(
            &api.answer(&id, json!({"Enter the security code we sent you": ["123456"]})).await,
            401,
            "INVALID_SECURITY_RESPONSE",
        );
        assert_eq!(api.answer(&id, json!({"Enter the security code we sent you": ["654321"]})).await.0, 200);
    }
}

#[tokio::test]
async fn reset_questions_take_a_question_and_an_answer_each() {
    let api = patient_api();
    let first = api.credentials("mfa_reset_questions", false).await;
    let id = request_id(&first);
    let round1 = challenges(&first.1);
    assert_eq!(round1.len(), 2);
    assert!(round1.iter().all(|c| c["Type"] == "MultipleChoice" && strings(&c["Iterables"]).len() == 4));
    assert_eq!(strings(&round1[1]["Iterables"]), ["1998", "2003", "2010", "2015"]);
    let branch = "Which bank branch did you open your first account at?";
    let year = "What year did you open your first account?";
    assert_eq!(prompts(&first.1), [branch, year]);
    let right_branch = user("mfa_reset_questions").answers[0].1.clone();
    assert_error(
        &api.answer(&id, json!({branch: right_branch, year: ["1998"]})).await,
        401,
        "INVALID_SECURITY_RESPONSE",
    );
    let second = api.answer(&id, json!({branch: right_branch, year: ["2003"]})).await;
    assert_eq!(second.0, 203, "{}", second.1);
    assert_eq!(prompts(&second.1), ["New security question 1", "New security question 2", "New security question 3"]);
    let questions = strings(&challenges(&second.1)[0]["Iterables"]);
    assert_eq!(questions.len(), 5);
    for challenge in challenges(&second.1) {
        assert_eq!(challenge["Type"], "QuestionAndAnswer");
        assert_eq!(strings(&challenge["Iterables"]), questions);
    }
    let with = |third: Value| {
        json!({
            "New security question 1": [questions[0], "Rex"],
            "New security question 2": [questions[1], "Civic"],
            "New security question 3": third,
        })
    };
    for wrong in [json!(["What is your favourite colour?", "Blue"]), json!([questions[2], "  "]), json!([questions[2]])]
    {
        assert_error(&api.answer(&id, with(wrong)).await, 401, "INVALID_SECURITY_RESPONSE");
    }
    assert_eq!(api.answer(&id, with(json!([questions[3], "Sainte-Anne"]))).await.0, 200);
}

#[tokio::test]
async fn image_selection_sends_16_real_png_images() {
    let api = Api::new();
    let first = api.credentials("mfa_image", false).await;
    let id = request_id(&first);
    assert_eq!(prompts(&first.1), ["What city were you born in?"]);
    let second = api.answer(&id, json!({"What city were you born in?": ["Montreal"]})).await;
    assert_eq!(second.0, 203);
    let challenge = &challenges(&second.1)[0];
    assert_eq!(challenge["Type"], "ImageSelection");
    assert_eq!(challenge["Prompt"], "Select your personal image");
    let images = strings(&challenge["Iterables"]);
    assert_eq!(images.len(), 16);
    let mut pixels = HashSet::new();
    for image in &images {
        assert!((3_500..=4_500).contains(&image.len()), "about 4,000 characters, got {}", image.len());
        let bytes = base64::engine::general_purpose::STANDARD.decode(image).expect("base64");
        let decoded = decode_png(&bytes);
        assert!(decoded.iter().collect::<HashSet<_>>().len() >= 2, "an image with a pattern, not a flat colour");
        assert!(pixels.insert(decoded), "every image looks different");
    }
    // The same images every time.
    let again = api.credentials("mfa_image", false).await;
    let again = api.answer(&request_id(&again), json!({"What city were you born in?": ["Montreal"]})).await;
    assert_eq!(strings(&challenges(&again.1)[0]["Iterables"]), images);
    assert_eq!(user("mfa_image").answers[1].1, [images[7].clone()]);

    let prompt = "Select your personal image";
    assert_error(&api.answer(&id, json!({prompt: [images[6]]})).await, 401, "INVALID_SECURITY_RESPONSE");
    let done = api.answer(&id, json!({prompt: [images[7]]})).await;
    assert_eq!(done.0, 200);
}

/// A strict decoder for what the sandbox makes: 8-bit RGB, stored deflate blocks. Checks every
/// CRC and the Adler-32, returns the pixels.
fn decode_png(bytes: &[u8]) -> Vec<[u8; 3]> {
    fn crc32(data: &[u8]) -> u32 {
        let mut crc = 0xffff_ffffu32;
        for &byte in data {
            crc ^= u32::from(byte);
            for _ in 0..8 {
                crc = if crc & 1 == 1 { (crc >> 1) ^ 0xedb8_8320 } else { crc >> 1 };
            }
        }
        !crc
    }
    let be = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    let (mut at, mut width, mut height, mut idat, mut ended) = (8, 0, 0, Vec::new(), false);
    while at < bytes.len() {
        let len = be(&bytes[at..]) as usize;
        let kind = &bytes[at + 4..at + 8];
        let data = &bytes[at + 8..at + 8 + len];
        assert_eq!(be(&bytes[at + 8 + len..]), crc32(&bytes[at + 4..at + 8 + len]), "CRC of {kind:?}");
        match kind {
            b"IHDR" => {
                width = be(data) as usize;
                height = be(&data[4..]) as usize;
                assert_eq!(&data[8..], [8, 2, 0, 0, 0], "8-bit RGB");
            }
            b"IDAT" => idat.extend_from_slice(data),
            b"IEND" => ended = true,
            _ => {}
        }
        at += 12 + len;
    }
    assert!(ended && width > 0 && height > 0);
    assert_eq!((u16::from(idat[0]) << 8 | u16::from(idat[1])) % 31, 0, "zlib header check");
    let mut raw = Vec::new();
    let mut at = 2;
    loop {
        let header = idat[at];
        assert_eq!(header & 0b110, 0, "stored block");
        let len = u16::from_le_bytes([idat[at + 1], idat[at + 2]]);
        let nlen = u16::from_le_bytes([idat[at + 3], idat[at + 4]]);
        assert_eq!(len, !nlen);
        raw.extend_from_slice(&idat[at + 5..at + 5 + len as usize]);
        at += 5 + len as usize;
        if header & 1 == 1 {
            break;
        }
    }
    let (mut a, mut b) = (1u32, 0u32);
    for &byte in &raw {
        a = (a + u32::from(byte)) % 65_521;
        b = (b + a) % 65_521;
    }
    assert_eq!(be(&idat[at..]), (b << 16) | a, "Adler-32");
    assert_eq!(raw.len(), height * (1 + 3 * width));
    raw.chunks(1 + 3 * width)
        .flat_map(|row| {
            assert_eq!(row[0], 0, "filter None");
            row[1..].chunks(3).map(|p| [p[0], p[1], p[2]]).collect::<Vec<_>>()
        })
        .collect()
}
