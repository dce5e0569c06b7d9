//! Every word the widget's pages show, per `language` (`en`, the default, or `fr`;
//! docs/sandbox.md#parameters-honoured): one table per language, so a page never mixes them and a
//! word is changed in one place. Element ids, event names and values are not words a person
//! reads: they stay the same in every language. Texts with `{name}` are templates, filled by
//! [`fill`].

/// The words of the pages in one language.
pub(crate) struct Texts {
    /// The page's `lang` attribute.
    pub lang: &'static str,
    /// What the sandbox is called, after the page's title and in the header.
    pub sandbox: &'static str,
    pub secure_connection: &'static str,
    pub close: &'static str,
    pub continue_: &'static str,

    pub consent_title: &'static str,
    /// Who connects when `customerName` is not given.
    pub consent_who: &'static str,
    /// `{who}`: the customer's name or [`Texts::consent_who`].
    pub consent_text: &'static str,
    pub consent_items: [&'static str; 3],
    pub consent_fine: &'static str,
    pub decline: &'static str,

    pub institutions_title: &'static str,
    pub investment_institutions_title: &'static str,
    pub search_placeholder: &'static str,
    pub search_label: &'static str,
    pub not_in_sandbox: &'static str,
    pub no_institution: &'static str,

    /// `{institution}`: its name.
    pub sign_in_to: &'static str,
    pub username: &'static str,
    pub password: &'static str,
    pub other_institution: &'static str,
    /// `{password}`, `{command}`: filled with markup by the page; the test users follow.
    pub test_users: &'static str,

    pub mfa_title: &'static str,
    pub image_title: &'static str,
    pub text_or_call_title: &'static str,
    pub trusted_device_title: &'static str,
    pub new_questions_title: &'static str,
    /// `{n}`: its place in the grid, from 1.
    pub image: &'static str,
    pub text_me: &'static str,
    pub call_me: &'static str,
    pub trusted_device_note: &'static str,
    pub confirmed: &'static str,
    pub question: &'static str,
    pub choose_question: &'static str,
    pub answer: &'static str,

    pub accounts_title: &'static str,
    pub account_title: &'static str,
    pub no_account: &'static str,
    /// `{currency}`: the one asked for.
    pub no_account_in: &'static str,
    /// An amount: the thousands separator, the decimal mark, and where the dollar sign goes.
    pub thousands: &'static str,
    pub decimal: &'static str,
    pub dollar_first: bool,

    pub connected_title: &'static str,
    pub connected_text: &'static str,
    pub taking_you_back: &'static str,
    pub sent_to_app: &'static str,
    pub code: &'static str,

    pub bad_link_title: &'static str,
    /// `{name}`, `{value}`: the parameter and what came.
    pub bad_flag: &'static str,
    /// `{value}`.
    pub bad_product_type: &'static str,
    /// `{max}`, `{value}`.
    pub bad_maximum_retry: &'static str,
    /// `{value}`.
    pub bad_redirect_url: &'static str,
    pub unusable_link_title: &'static str,
    /// `{customer_id}`: the path of GenerateAuthorizeToken.
    pub token_missing: &'static str,
    pub token_unreadable: &'static str,
    pub token_used: &'static str,
    /// `{minutes}`: the token's life.
    pub token_expired: &'static str,
    /// `{minutes}`.
    pub token_unknown: &'static str,
    pub unknown_institution_title: &'static str,
    /// `{given}`, `{institution}`, `{number}`.
    pub unknown_institution: &'static str,
    pub ended_title: &'static str,
    pub ended: &'static str,
    pub cancelled_title: &'static str,
    pub cancelled: &'static str,
    pub too_many_title: &'static str,
    /// `{message}`: Authorize's; `{attempt}`, `{maximum}`.
    pub too_many: &'static str,
    /// `{message}`: Authorize's; `{left}`: the tries left.
    pub wrong_credentials: &'static str,
    /// `{message}`: Authorize's.
    pub wrong_answer: &'static str,
    pub refused_title: &'static str,
    /// `{message}`: Authorize's.
    pub refused: &'static str,
}

/// The pages in English, the default.
pub(crate) const ENGLISH: Texts = Texts {
    lang: "en",
    sandbox: "bankfeed sandbox",
    secure_connection: "Secure connection",
    close: "Close",
    continue_: "Continue",
    consent_title: "Connect your account",
    consent_who: "This application",
    consent_text: "{who} uses the bankfeed sandbox to connect to your financial institution. It will read:",
    consent_items: ["Your account details and balances", "Your transactions", "Your statements"],
    consent_fine: "This is an offline imitation of the hosted connection widget: no real institution is contacted.",
    decline: "Decline",
    institutions_title: "Select your institution",
    investment_institutions_title: "Select your investment institution",
    search_placeholder: "Search for your institution",
    search_label: "Search",
    not_in_sandbox: "not in the sandbox",
    no_institution: "No institution to show.",
    sign_in_to: "Sign in to {institution}",
    username: "Username",
    password: "Password",
    other_institution: "← Choose another institution",
    test_users: "This is the bankfeed sandbox, not a bank: sign in as one of its test users, password {password}. \
                 What each one is asked to type follows its name; {command} describes them all.",
    mfa_title: "Security verification",
    image_title: "Security image",
    text_or_call_title: "Receive a security code",
    trusted_device_title: "Confirm on your trusted device",
    new_questions_title: "Choose new security questions",
    image: "Image {n}",
    text_me: "Text me",
    call_me: "Call me",
    trusted_device_note: "Open your institution's app on your trusted device and approve this sign-in, then confirm here.",
    confirmed: "I have confirmed",
    question: "Question",
    choose_question: "Choose a question",
    answer: "Answer",
    accounts_title: "Select your accounts",
    account_title: "Select an account",
    no_account: "No account to choose.",
    no_account_in: "No account in {currency} to choose.",
    thousands: ",",
    decimal: ".",
    dollar_first: true,
    connected_title: "Your account is connected",
    connected_text: "You can now close this window.",
    taking_you_back: "Taking you back…",
    sent_to_app: "Sent to your app:",
    code: "Code:",
    bad_link_title: "This link is not valid",
    bad_flag: "{name} must be true or false, got {value}",
    bad_product_type: "productType must be banking or investment (in any case), got {value}",
    bad_maximum_retry: "maximumRetry must be a whole number from 1 to {max}, got {value}",
    bad_redirect_url: "redirectUrl must be an http:// or https:// URL, got {value}",
    unusable_link_title: "This link cannot be used",
    token_missing: "The authorizeToken parameter is missing: this sandbox asks for keys, so every widget URL \
                    carries a single-use token from GenerateAuthorizeToken. bankfeed's client.connect_url(...) \
                    and client.connect(...) mint one; by hand, POST /v3/{customer_id}/BankingServices/GenerateAuthorizeToken \
                    with the secret key in the flinks-auth-key header. A sandbox started with --no-auth \
                    (bf.Sandbox(auth=False)) asks for none.",
    token_unreadable: "The authorizeToken parameter is not a token from GenerateAuthorizeToken.",
    token_used: "The authorizeToken has been used already: a token opens the widget once. Generate a new one.",
    token_expired: "The authorizeToken has expired: a token lives {minutes} minutes. Generate a new one.",
    token_unknown: "The authorizeToken was not issued by GenerateAuthorizeToken, has been used already, or is older \
                    than {minutes} minutes.",
    unknown_institution_title: "Unknown institution",
    unknown_institution: "institution names an institution the sandbox does not know: {given}; it knows \
                          {institution} (or its number {number})",
    ended_title: "This connection has ended",
    ended: "This connection has ended or expired. Open the widget again to start over.",
    cancelled_title: "Connection cancelled",
    cancelled: "You declined to share your data: nothing was connected.",
    too_many_title: "Too many attempts",
    too_many: "{message}. That was attempt {attempt} of {maximum}: this connection is closed. Open the widget again \
               to start over.",
    wrong_credentials: "{message}. Check your username and password and try again ({left} left). The sandbox's \
                        test users are listed below, and by the command bankfeed users.",
    wrong_answer: "{message}. Try again.",
    refused_title: "We could not connect your account",
    refused: "{message}",
};

/// The pages in Canadian French (`language=fr`). Authorize's own messages are English, so the
/// French pages say what happened in their own words rather than quote them.
pub(crate) const FRENCH: Texts = Texts {
    lang: "fr",
    sandbox: "bac à sable bankfeed",
    secure_connection: "Connexion sécurisée",
    close: "Fermer",
    continue_: "Continuer",
    consent_title: "Connectez votre compte",
    consent_who: "Cette application",
    consent_text: "{who} utilise le bac à sable bankfeed pour se connecter à votre institution financière. \
                   Seront consultés :",
    consent_items: ["Les détails et les soldes de vos comptes", "Vos transactions", "Vos relevés"],
    consent_fine: "Ceci est une imitation hors ligne du widget de connexion hébergé : aucune véritable \
                   institution n'est contactée.",
    decline: "Refuser",
    institutions_title: "Sélectionnez votre institution",
    investment_institutions_title: "Sélectionnez votre institution de placement",
    search_placeholder: "Recherchez votre institution",
    search_label: "Rechercher",
    not_in_sandbox: "absente du bac à sable",
    no_institution: "Aucune institution à afficher.",
    sign_in_to: "Connexion à {institution}",
    username: "Nom d'utilisateur",
    password: "Mot de passe",
    other_institution: "← Choisir une autre institution",
    test_users: "Ceci est le bac à sable bankfeed, pas une banque : connectez-vous avec l'un de ses utilisateurs \
                 de test, mot de passe {password}. Ce que chacun doit saisir suit son nom; {command} les décrit \
                 tous.",
    mfa_title: "Vérification de sécurité",
    image_title: "Image de sécurité",
    text_or_call_title: "Recevoir un code de sécurité",
    trusted_device_title: "Confirmez sur votre appareil de confiance",
    new_questions_title: "Choisissez de nouvelles questions de sécurité",
    image: "Image {n}",
    text_me: "Par texto",
    call_me: "Par appel",
    trusted_device_note: "Ouvrez l'application de votre institution sur votre appareil de confiance et approuvez \
                          cette connexion, puis confirmez ici.",
    confirmed: "J'ai confirmé",
    question: "Question",
    choose_question: "Choisissez une question",
    answer: "Réponse",
    accounts_title: "Sélectionnez vos comptes",
    account_title: "Sélectionnez un compte",
    no_account: "Aucun compte à choisir.",
    no_account_in: "Aucun compte en {currency} à choisir.",
    thousands: "\u{a0}",
    decimal: ",",
    dollar_first: false,
    connected_title: "Votre compte est connecté",
    connected_text: "Vous pouvez maintenant fermer cette fenêtre.",
    taking_you_back: "Retour à votre application…",
    sent_to_app: "Transmis à votre application :",
    code: "Code :",
    bad_link_title: "Ce lien n'est pas valide",
    bad_flag: "{name} doit valoir true ou false; reçu : {value}",
    bad_product_type: "productType doit valoir banking ou investment (majuscules ou minuscules); reçu : {value}",
    bad_maximum_retry: "maximumRetry doit être un nombre entier de 1 à {max}; reçu : {value}",
    bad_redirect_url: "redirectUrl doit être une URL http:// ou https://; reçu : {value}",
    unusable_link_title: "Ce lien ne peut pas être utilisé",
    token_missing: "Le paramètre authorizeToken est absent : ce bac à sable exige des clés, alors chaque URL du \
                    widget porte un jeton à usage unique de GenerateAuthorizeToken. client.connect_url(...) et \
                    client.connect(...) de bankfeed en obtiennent un; à la main, faites un POST \
                    /v3/{customer_id}/BankingServices/GenerateAuthorizeToken avec la clé secrète dans l'en-tête \
                    flinks-auth-key. Un bac à sable lancé avec --no-auth (bf.Sandbox(auth=False)) n'en demande pas.",
    token_unreadable: "Le paramètre authorizeToken n'est pas un jeton de GenerateAuthorizeToken.",
    token_used: "Ce jeton authorizeToken a déjà servi : un jeton n'ouvre le widget qu'une fois. Générez-en un \
                 nouveau.",
    token_expired: "Ce jeton authorizeToken est expiré : un jeton est valide {minutes} minutes. Générez-en un \
                    nouveau.",
    token_unknown: "Ce jeton authorizeToken n'a pas été émis par GenerateAuthorizeToken, a déjà servi ou date de \
                    plus de {minutes} minutes.",
    unknown_institution_title: "Institution inconnue",
    unknown_institution: "institution nomme une institution que le bac à sable ne connaît pas : {given}; il \
                          connaît {institution} (ou son numéro, {number})",
    ended_title: "Cette connexion est terminée",
    ended: "Cette connexion est terminée ou expirée. Ouvrez le widget de nouveau pour recommencer.",
    cancelled_title: "Connexion annulée",
    cancelled: "Vous avez refusé de partager vos données : rien n'a été connecté.",
    too_many_title: "Trop de tentatives",
    too_many: "Nom d'utilisateur ou mot de passe incorrect. C'était la tentative {attempt} sur {maximum} : cette \
               connexion est fermée. Ouvrez le widget de nouveau pour recommencer.",
    wrong_credentials: "Nom d'utilisateur ou mot de passe incorrect. Vérifiez-les et réessayez (essais restants : \
                        {left}). Les utilisateurs de test du bac à sable sont listés ci-dessous, et par la \
                        commande bankfeed users.",
    wrong_answer: "Réponse incorrecte ou incomplète. Réessayez.",
    refused_title: "Nous n'avons pas pu connecter votre compte",
    refused: "Votre institution a refusé la connexion.",
};

/// The table of `language` (`fr` when `french`, else `en`).
pub(crate) fn of(french: bool) -> &'static Texts {
    if french {
        &FRENCH
    } else {
        &ENGLISH
    }
}

/// `template` with each `{name}` of `values` replaced, in one pass: a value that holds braces
/// (a customer's name) is not read as a placeholder.
pub(crate) fn fill(template: &str, values: &[(&str, &str)]) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(start) = rest.find('{') {
        out.push_str(&rest[..start]);
        let after = &rest[start + 1..];
        let named = after
            .find('}')
            .and_then(|end| values.iter().find(|(name, _)| *name == &after[..end]).map(|(_, value)| (end, value)));
        if let Some((end, value)) = named {
            out.push_str(value);
            rest = &after[end + 1..];
        } else {
            out.push('{');
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

impl Texts {
    /// An amount as people of the language read it: `$12,164.61`, `12 164,61 $`.
    pub(crate) fn money(&self, amount: f64) -> String {
        let cents = format!("{:.2}", amount.abs());
        let (whole, fraction) = cents.split_once('.').unwrap_or((&cents, "00"));
        let mut grouped = String::new();
        for (index, digit) in whole.chars().enumerate() {
            if index > 0 && (whole.len() - index) % 3 == 0 {
                grouped.push_str(self.thousands);
            }
            grouped.push(digit);
        }
        let sign = if amount < 0.0 { "-" } else { "" };
        if self.dollar_first {
            format!("{sign}${grouped}{}{fraction}", self.decimal)
        } else {
            format!("{sign}{grouped}{}{fraction}\u{a0}$", self.decimal)
        }
    }

    /// Every text of the table, for the tests that compare the languages.
    #[cfg(test)]
    pub(crate) fn all(&self) -> Vec<&'static str> {
        let mut all = vec![
            self.sandbox,
            self.secure_connection,
            self.close,
            self.continue_,
            self.consent_title,
            self.consent_who,
            self.consent_text,
            self.consent_fine,
            self.decline,
            self.institutions_title,
            self.investment_institutions_title,
            self.search_placeholder,
            self.search_label,
            self.not_in_sandbox,
            self.no_institution,
            self.sign_in_to,
            self.username,
            self.password,
            self.other_institution,
            self.test_users,
            self.mfa_title,
            self.image_title,
            self.text_or_call_title,
            self.trusted_device_title,
            self.new_questions_title,
            self.image,
            self.text_me,
            self.call_me,
            self.trusted_device_note,
            self.confirmed,
            self.question,
            self.choose_question,
            self.answer,
            self.accounts_title,
            self.account_title,
            self.no_account,
            self.no_account_in,
            self.connected_title,
            self.connected_text,
            self.taking_you_back,
            self.sent_to_app,
            self.code,
            self.bad_link_title,
            self.bad_flag,
            self.bad_product_type,
            self.bad_maximum_retry,
            self.bad_redirect_url,
            self.unusable_link_title,
            self.token_missing,
            self.token_unreadable,
            self.token_used,
            self.token_expired,
            self.token_unknown,
            self.unknown_institution_title,
            self.unknown_institution,
            self.ended_title,
            self.ended,
            self.cancelled_title,
            self.cancelled,
            self.too_many_title,
            self.too_many,
            self.wrong_credentials,
            self.wrong_answer,
            self.refused_title,
            self.refused,
        ];
        all.extend(self.consent_items);
        all
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::operations::challenge::{
        IMAGE_SELECTION, MULTIPLE_CHOICE, QUESTION_AND_ANSWER, TEXT_OR_CALL, WAIT_UNTIL_EU_ACCEPT,
    };
    use crate::widget::flow::{AccountChoice, Chrome, Flows, Navigate, Shown, View};
    use crate::widget::lists::{self, TEST_INSTITUTION_NAME};
    use crate::widget::login::Asked;
    use crate::widget::pages::render;
    use crate::widget::params::Product;
    use crate::world::state::Shared;
    use crate::SandboxConfig;

    /// The literal pieces of a template, between its `{placeholders}`.
    fn pieces(template: &str) -> Vec<&str> {
        template
            .split('{')
            .enumerate()
            .map(|(index, part)| if index == 0 { part } else { part.split_once('}').map_or(part, |(_, rest)| rest) })
            .map(str::trim)
            // A lone short word ("of" between two placeholders) says nothing about the language.
            .filter(|piece| piece.chars().filter(|c| c.is_alphabetic()).count() > 2)
            .collect()
    }

    /// Whether `page` holds `piece` as whole words (`Continue` is not in `Continuer`).
    fn holds(page: &str, piece: &str) -> bool {
        let word = |c: Option<char>| c.is_some_and(char::is_alphanumeric);
        page.match_indices(piece).any(|(at, _)| {
            let before = page[..at].chars().next_back();
            let after = page[at + piece.len()..].chars().next();
            let joined_before = word(piece.chars().next()) && word(before);
            let joined_after = word(piece.chars().next_back()) && word(after);
            !joined_before && !joined_after
        })
    }

    /// The page without its script and style, whose words are code, not text a person reads.
    fn readable(page: &str) -> String {
        let mut out = String::new();
        let mut rest = page;
        while let Some(start) = rest.find("<script").or_else(|| rest.find("<style")) {
            let start = [rest.find("<script"), rest.find("<style")].into_iter().flatten().min().unwrap_or(start);
            out.push_str(&rest[..start]);
            let close = if rest[start..].starts_with("<script") { "</script>" } else { "</style>" };
            rest = rest[start..].find(close).map_or("", |end| &rest[start + end + close.len()..]);
        }
        out.push_str(rest);
        out
    }

    /// The French page holds its French title and none of the English table's texts that French
    /// words differently.
    fn assert_french(page: &str, title: &str) {
        assert!(page.contains(r#"<html lang="fr">"#), "{page}");
        let heading = format!(r#"<h1 id="page-title">{}</h1>"#, title.replace('\'', "&#39;"));
        assert!(page.contains(&heading), "{heading} not in {page}");
        let page = readable(page);
        for (english, french) in ENGLISH.all().into_iter().zip(FRENCH.all()) {
            if english == french {
                continue;
            }
            for piece in pieces(english) {
                assert!(!holds(&page, piece), "English {piece:?} in the French page {page}");
            }
        }
    }

    fn shared(auth: bool) -> Arc<Shared> {
        Arc::new(Shared::new(SandboxConfig { auth, ..SandboxConfig::default() }))
    }

    fn pairs(query: &[(&str, &str)]) -> Vec<(String, String)> {
        query.iter().map(|(key, value)| ((*key).to_owned(), (*value).to_owned())).collect()
    }

    async fn send(flows: &Flows, shared: &Arc<Shared>, shown: &Shown, form: &[(&str, &str)]) -> Shown {
        flows.advance(shared, shown.flow.as_deref().expect("a page with a form"), &pairs(form)).await
    }

    #[tokio::test]
    async fn a_french_flow_shows_no_english_text() {
        let shared = shared(false);
        let flows = Flows::default();
        let query = [("demo", "true"), ("language", "fr"), ("accountSelectorEnable", "true"), ("closeEnable", "true")];
        let consent = flows.begin(&shared, &pairs(&query));
        assert_french(&render(&consent), FRENCH.consent_title);
        let list = send(&flows, &shared, &consent, &[("action", "consent")]).await;
        assert_french(&render(&list), FRENCH.institutions_title);
        assert!(render(&list).contains(FRENCH.not_in_sandbox));
        assert!(render(&list).contains("Banque Nationale") && !render(&list).contains("National Bank"));
        let form = send(&flows, &shared, &list, &[("action", "institution"), ("institution", "FlinksCapital")]).await;
        let sign_in = fill(FRENCH.sign_in_to, &[("institution", TEST_INSTITUTION_NAME)]);
        assert_french(&render(&form), &sign_in);
        let credentials = [("action", "credentials"), ("username", "Greatday")];
        let retry = send(&flows, &shared, &form, &[credentials[0], credentials[1], ("password", "wrong")]).await;
        assert_french(&render(&retry), &sign_in);
        assert!(render(&retry).contains(r#"id="credential-error""#));
        let mut page = send(&flows, &shared, &retry, &[credentials[0], credentials[1], ("password", "Everyday")]).await;
        let wrong = send(&flows, &shared, &page, &[("action", "mfa"), ("answer-0", "Nowhere")]).await;
        assert_french(&render(&wrong), FRENCH.mfa_title);
        assert!(render(&wrong).contains(r#"id="mfa-error""#));
        // Greatday asks one of its three questions, in French.
        let View::Mfa { round, .. } = &wrong.view else { panic!("the challenge again") };
        let answer = match &round[0].prompt {
            prompt if prompt.contains("ville") => "Montreal",
            prompt if prompt.contains("pays") => "Canada",
            _ => "Triangle",
        };
        page = send(&flows, &shared, &wrong, &[("action", "mfa"), ("answer-0", answer)]).await;
        assert_french(&render(&page), FRENCH.account_title);
        let View::Accounts { accounts, .. } = &page.view else { panic!("the account selection") };
        let chosen = accounts[0].id.clone();
        let done = send(&flows, &shared, &page, &[("action", "accounts"), ("account", &chosen)]).await;
        assert_french(&render(&done), FRENCH.connected_title);
    }

    #[tokio::test]
    async fn french_error_pages_show_no_english_text() {
        let open = shared(false);
        let flows = Flows::default();
        let consent = flows.begin(&open, &pairs(&[("language", "fr")]));
        let denied = send(&flows, &open, &consent, &[("action", "deny")]).await;
        assert_french(&render(&denied), FRENCH.cancelled_title);
        let bad = flows.begin(&open, &pairs(&[("language", "FR"), ("demo", "yes")]));
        assert_french(&render(&bad), FRENCH.bad_link_title);
        let unknown = flows.begin(&open, &pairs(&[("language", "fr"), ("institution", "Nowhere")]));
        assert_french(&render(&unknown), FRENCH.unknown_institution_title);
        let refused =
            flows.begin(&open, &pairs(&[("language", "fr"), ("institution", "14"), ("consentEnable", "false")]));
        let credentials = [("action", "credentials"), ("username", "test_disabled_account"), ("password", "Everyday")];
        assert_french(&render(&send(&flows, &open, &refused, &credentials).await), FRENCH.refused_title);
        let last = flows.begin(
            &open,
            &pairs(&[("language", "fr"), ("institution", "14"), ("consentEnable", "false"), ("maximumRetry", "1")]),
        );
        let wrong = [("action", "credentials"), ("username", "Greatday"), ("password", "wrong")];
        assert_french(&render(&send(&flows, &open, &last, &wrong).await), FRENCH.too_many_title);
        let keyed = shared(true);
        let missing = flows.begin(&keyed, &pairs(&[("language", "fr")]));
        assert_french(&render(&missing), FRENCH.unusable_link_title);
        let unreadable = flows.begin(&keyed, &pairs(&[("language", "fr"), ("authorizeToken", "nope")]));
        assert_french(&render(&unreadable), FRENCH.unusable_link_title);
    }

    #[test]
    fn every_french_challenge_page_and_list_shows_no_english_text() {
        let chrome = Chrome { french: true, header: true, close: true, ..Chrome::default() };
        let asked = |kind: &str, choices: &[&str]| Asked {
            kind: kind.to_owned(),
            prompt: "Quelle est votre couleur préférée?".to_owned(),
            choices: choices.iter().map(|&choice| choice.to_owned()).collect(),
        };
        let views = [
            (View::Mfa { round: vec![asked(IMAGE_SELECTION, &["iVBO"; 16])], error: None }, FRENCH.image_title),
            (View::Mfa { round: vec![asked(TEXT_OR_CALL, &["514-555-0100"])], error: None }, FRENCH.text_or_call_title),
            (View::Mfa { round: vec![asked(WAIT_UNTIL_EU_ACCEPT, &[])], error: None }, FRENCH.trusted_device_title),
            (
                View::Mfa { round: vec![asked(QUESTION_AND_ANSWER, &["Ville?"])], error: None },
                FRENCH.new_questions_title,
            ),
            (View::Mfa { round: vec![asked(MULTIPLE_CHOICE, &["Bleu", "Rouge"])], error: None }, FRENCH.mfa_title),
            (
                View::Institutions {
                    product: Product::Investment,
                    entries: lists::entries(Product::Investment, true, true),
                    filter: true,
                },
                FRENCH.investment_institutions_title,
            ),
            (
                View::Institutions { product: Product::Banking, entries: Vec::new(), filter: false },
                FRENCH.institutions_title,
            ),
            (
                View::Accounts { accounts: Vec::new(), multiple: true, currency: Some("usd".into()) },
                FRENCH.accounts_title,
            ),
            (
                View::Accounts {
                    accounts: vec![AccountChoice {
                        id: "a".into(),
                        title: "Chèques".into(),
                        number_tail: "1234".into(),
                        balance: FRENCH.money(12_164.61),
                        currency: "CAD",
                    }],
                    multiple: false,
                    currency: None,
                },
                FRENCH.account_title,
            ),
            (
                View::Connected {
                    url: "https://example.com/?loginId=x".into(),
                    navigate: Some(Navigate { url: "https://example.com/?loginId=x".into(), top: true }),
                    login_id: "x".into(),
                },
                FRENCH.connected_title,
            ),
            (
                View::Connected { url: "?loginId=x".into(), navigate: None, login_id: "x".into() },
                FRENCH.connected_title,
            ),
        ];
        for (view, title) in views {
            let shown = Shown { flow: Some("f".into()), chrome: chrome.clone(), view, events: Vec::new() };
            assert_french(&render(&shown), title);
        }
    }

    #[test]
    fn both_tables_fill_the_same_placeholders() {
        let names = |template: &str| -> Vec<String> {
            template
                .split('{')
                .skip(1)
                .filter_map(|part| part.split_once('}'))
                .map(|(name, _)| name.to_owned())
                .collect()
        };
        for (english, french) in ENGLISH.all().into_iter().zip(FRENCH.all()) {
            let (mut english_names, mut french_names) = (names(english), names(french));
            english_names.sort();
            french_names.sort();
            // French says what happened in its own words instead of quoting Authorize's English message.
            english_names.retain(|name| name != "message");
            assert_eq!(english_names, french_names, "{english:?} / {french:?}");
        }
    }

    #[test]
    fn templates_are_filled_once() {
        assert_eq!(fill("Sign in to {institution}", &[("institution", "{institution}")]), "Sign in to {institution}");
        assert_eq!(fill("{a} and {b} {c}", &[("a", "1"), ("b", "2")]), "1 and 2 {c}");
    }

    #[test]
    fn amounts_are_grouped_by_thousands_in_each_language() {
        assert_eq!(ENGLISH.money(12_164.61), "$12,164.61");
        assert_eq!(ENGLISH.money(-80.0), "-$80.00");
        assert_eq!(ENGLISH.money(1_000_000.5), "$1,000,000.50");
        assert_eq!(ENGLISH.money(999.999), "$1,000.00");
        assert_eq!(FRENCH.money(12_164.61), "12\u{a0}164,61\u{a0}$");
        assert_eq!(FRENCH.money(-80.0), "-80,00\u{a0}$");
    }
}
