//! The attributes: the catalogue, the packages, custom requests, every value recomputed.

use super::*;

const PACKAGES: [(&str, &[&str]); 4] = [
    (
        "GetIncomeAttributes",
        &[
            "sum_employer_income",
            "count_employer_income",
            "avg_employer_income",
            "count_employers",
            "days_since_last_employer_income",
            "sum_government_income",
            "avg_monthly_deposit",
            "sum_deposits_90_days",
        ],
    ),
    (
        "GetCreditRiskAttributes",
        &[
            "count_nsf",
            "count_nsf_90_days",
            "sum_nsf_fees",
            "count_negative_balance",
            "balance_min",
            "balance_max",
            "balance_current",
            "sum_loan_payments",
            "count_loan_payments",
        ],
    ),
    (
        "GetUserAnalysisAttributes",
        &[
            "account_age_days",
            "count_accounts",
            "count_transactions",
            "avg_monthly_deposit",
            "avg_monthly_withdrawal",
            "sum_bill_payments",
            "sum_credit_card_payments",
            "balance_current",
        ],
    ),
    (
        "GetLendingAttributes",
        &[
            "balance_current",
            "balance_min",
            "count_nsf",
            "sum_employer_income",
            "avg_monthly_deposit",
            "avg_monthly_withdrawal",
            "sum_loan_payments",
            "sum_withdrawals_90_days",
            "days_since_last_employer_income",
        ],
    ),
];

fn all_names() -> Vec<&'static str> {
    attribute_catalogue().iter().map(|(name, _)| *name).collect()
}

/// Logs in, fetches account detail once (so attributes are available) and returns the detail.
async fn prepared(api: &Api, username: &str) -> (Login, Value) {
    let login = api.saved_login(username).await;
    let detail = api.all_transactions(&login).await;
    (login, detail)
}

/// Repeats an attributes call until it stops answering 202.
async fn settle(api: &Api, login: &Login, method: reqwest::Method, op: &str, body: Option<Value>) -> Reply {
    for _ in 0..50 {
        let path =
            if op.is_empty() { Api::attributes_path(login) } else { format!("{}/{op}", Api::attributes_path(login)) };
        let reply = api.send(method.clone(), &path, body.clone()).await;
        if reply.0 != 202 {
            return reply;
        }
    }
    panic!("attributes pending forever")
}

#[test]
fn the_catalogue_and_packages_are_exposed() {
    let catalogue = attribute_catalogue();
    assert_eq!(catalogue.len(), 24);
    assert!(catalogue.iter().all(|(_, description)| !description.is_empty()));
    let packages = attribute_packages();
    assert_eq!(packages.len(), 5);
    for ((operation, names), (expected_operation, expected)) in packages.iter().zip(PACKAGES) {
        assert_eq!(*operation, expected_operation);
        assert_eq!(names.as_slice(), expected);
    }
    assert_eq!(packages[4], ("GetAllAttributes", all_names()));
}

#[tokio::test]
async fn attributes_wait_for_account_detail_then_have_their_own_pending_phase() {
    let api = Api::with(SandboxConfig { pending_polls: 1, tier2: true, ..SandboxConfig::default() });
    let login = api.saved_login("greatday_nomfa").await;
    let custom = json!({"MostRecentCached": true, "Attributes": {"Card": ["count_nsf"]}});
    for _ in 0..3 {
        for reply in [api.use_case(&login, "GetIncomeAttributes").await, api.custom(&login, custom.clone()).await] {
            assert_eq!(reply.0, 202);
            assert_eq!(reply.1["FlinksCode"], "OPERATION_PENDING");
            assert_eq!(reply.1["Links"], json!([]), "no Async link: repeat the request");
            assert_eq!(reply.1["RequestId"], login.request_id.as_str());
        }
    }
    // A detail call still pending does not count.
    assert_eq!(api.post(DETAIL, json!({"RequestId": login.request_id})).await.0, 202);
    assert_eq!(api.use_case(&login, "GetIncomeAttributes").await.0, 202);
    assert_eq!(api.post(DETAIL, json!({"RequestId": login.request_id})).await.0, 200);
    // Now each attributes operation goes through its own pending phase.
    assert_eq!(api.use_case(&login, "GetIncomeAttributes").await.0, 202);
    assert_eq!(api.use_case(&login, "GetIncomeAttributes").await.0, 200);
    assert_eq!(api.custom(&login, custom.clone()).await.0, 202);
    assert_eq!(api.custom(&login, custom.clone()).await.0, 200);
    // Another RequestId of the same login waits for its own account detail.
    let cached = api.cached(&login.login_id).await;
    let other =
        Login { login_id: login.login_id.clone(), request_id: cached.1["RequestId"].as_str().unwrap().to_owned() };
    assert_eq!(api.use_case(&other, "GetIncomeAttributes").await.0, 202);
    let (_, done) = api.banking(DETAIL, json!({"RequestId": other.request_id})).await;
    assert_eq!(done.0, 200);
    assert_eq!(api.use_case(&other, "GetIncomeAttributes").await.0, 202);
    assert_eq!(api.use_case(&other, "GetIncomeAttributes").await.0, 200);
}

#[tokio::test]
async fn use_case_operations_answer_exactly_their_package() {
    for tier2 in [false, true] {
        let api = Api::with(SandboxConfig { tier2, ..config() });
        let (login, _) = prepared(&api, "greatday_nomfa").await;
        for (operation, names) in PACKAGES {
            let reply = api.use_case(&login, operation).await;
            assert_eq!(reply.0, 200, "{operation}: {}", reply.1);
            let body = reply.1.as_object().unwrap();
            let keys: BTreeSet<&str> = body.keys().map(String::as_str).collect();
            assert_eq!(keys, BTreeSet::from(["Card", "Login", "RequestId", "HttpStatusCode"]));
            let card = body["Card"].as_object().unwrap();
            let mut expected: BTreeSet<&str> = names.iter().copied().collect();
            expected.insert("Id");
            assert_eq!(card.keys().map(String::as_str).collect::<BTreeSet<_>>(), expected);
            assert_eq!(card["Id"], login.login_id.as_str(), "the group's Id is the LoginId");
            assert_eq!(body["HttpStatusCode"], 200);
            assert_eq!(body["Login"]["Id"], login.login_id.as_str());
        }
        let all = api.use_case(&login, "GetAllAttributes").await;
        if tier2 {
            assert_eq!(all.0, 200);
            let names: BTreeSet<&str> =
                all.1["Card"].as_object().unwrap().keys().map(String::as_str).filter(|key| *key != "Id").collect();
            assert_eq!(names, all_names().into_iter().collect());
        } else {
            assert_error(&all, 401, "ACCESS_DENIED");
            assert_message_names(&all, "Tier 2");
        }
        for business in ["GetBusinessAnalysisAttributes", "GetAllBusinessAttributes"] {
            assert_error(&api.use_case(&login, business).await, 405, "METHOD_NOT_AVAILABLE");
        }
        assert_error(&api.use_case(&login, "GetEverything").await, 404, "INVALID_REQUEST");
        let stranger = Login { login_id: uuid::Uuid::new_v4().to_string(), request_id: login.request_id.clone() };
        assert_error(&api.use_case(&stranger, "GetIncomeAttributes").await, 400, "INVALID_REQUEST");
        let nowhere = Login { login_id: login.login_id.clone(), request_id: uuid::Uuid::new_v4().to_string() };
        assert_error(&api.use_case(&nowhere, "GetIncomeAttributes").await, 400, "SESSION_NONEXISTENT");
    }
}

#[tokio::test]
async fn custom_attribute_requests_are_refused_as_the_documentation_lists() {
    let api = Api::with(SandboxConfig { tier2: true, ..config() });
    let (login, detail) = prepared(&api, "greatday_nomfa").await;
    let card = json!({"Card": ["count_nsf"]});
    let unknown = "00000000-0000-0000-0000-000000000000";
    let known = text(&detail["Accounts"][0]["Id"]).to_owned();
    let cases = [
        (json!({"MostRecentCached": true}), "At least a single attribute"),
        (json!({"Attributes": {}}), "At least a single attribute"),
        (json!({"Attributes": {"Card": []}}), "At least a single attribute"),
        (json!({"Attributes": ["count_nsf"]}), "Attributes"),
        (json!({"Attributes": {"Card": ["count_nsf", "Count_NSF"]}}), "Count_NSF"),
        (json!({"Attributes": {"Card": ["no_such_thing"]}}), "no_such_thing"),
        (json!({"Attributes": {"Risk": ["count_nsf"]}}), "only supported attribute level"),
        (json!({"Attributes": card, "Options": {"AttributesDetail": ["bogus_detail"]}}), "bogus_detail"),
        (json!({"Attributes": card, "AttributesDetail": ["balance_min"]}), "AttributesDetail"),
        (json!({"Attributes": card, "Filters": {"AccountCategory": "Operations"}}), "AccountCategory"),
        (json!({"Attributes": card, "Filters": {"AccountCategory": ["Credits"]}}), "One or more filters are invalid"),
        (json!({"Attributes": card, "Filters": {"Currency": ["CAD"]}}), "One or more filters are invalid"),
        (json!({"Attributes": card, "AccountFilter": {"AccountID": [unknown]}}), unknown),
        (json!({"Attributes": card, "Options": {"AccountFilter": [known, unknown]}}), unknown),
        (json!({"Attributes": card, "AccountFilter": {"AccountID": []}}), "At least one accountId"),
        (json!({"Attributes": card, "AccountFilter": {}}), "At least one accountId"),
        (json!({"Attributes": card, "Options": {"AccountFilter": []}}), "At least one accountId"),
    ];
    for (body, named) in cases {
        let reply = api.custom(&login, body.clone()).await;
        assert_error(&reply, 400, "INVALID_REQUEST");
        assert!(reply.1["Message"].as_str().unwrap().contains(named), "{body}: {}", reply.1);
    }
    let stranger = Login { login_id: uuid::Uuid::new_v4().to_string(), request_id: login.request_id.clone() };
    let reply = api.custom(&stranger, json!({"Attributes": card})).await;
    assert_error(&reply, 400, "INVALID_REQUEST");
    // MostRecentCached is accepted, not required.
    for body in [json!({"Attributes": card}), json!({"Attributes": card, "MostRecentCached": true})] {
        assert_eq!(settle(&api, &login, reqwest::Method::POST, "", Some(body)).await.0, 200);
    }
}

#[tokio::test]
async fn the_custom_post_needs_a_tier2_package_as_get_all_attributes_does() {
    let api = Api::with(config());
    let (login, _) = prepared(&api, "greatday_nomfa").await;
    let body = json!({"Attributes": {"Card": ["count_nsf"]}});
    let reply = api.custom(&login, body.clone()).await;
    assert_error(&reply, 401, "ACCESS_DENIED");
    assert_message_names(&reply, "Tier 2");
    let all = api.use_case(&login, "GetAllAttributes").await;
    assert_error(&all, 401, "ACCESS_DENIED");
    // A use-case package answers.
    assert_eq!(settle(&api, &login, reqwest::Method::GET, "GetIncomeAttributes", None).await.0, 200);
}

#[tokio::test]
async fn the_limit_days_header_limits_the_transactions_counted() {
    let api = Api::with(SandboxConfig { tier2: true, ..config() });
    let (login, detail) = prepared(&api, "greatday_nomfa").await;
    let (_, t) = scope(&detail, None, None);
    let path = Api::attributes_path(&login);
    let body = json!({"Attributes": {"Card": ["count_transactions"]}, "AttributesDetail": ["count_transactions"]});
    for days in [1_i64, 30, 365] {
        let reply = api.post_with(&path, &[("limitDays", &days.to_string())], body.clone()).await;
        assert_eq!(reply.0, 200, "{}", reply.1);
        let within = t.iter().filter(|tx| tx.age() < days).count();
        assert_eq!(reply.1["Card"]["count_transactions"], within, "limitDays {days}");
        let listed = reply.1["Card"][DETAIL_KEY][0]["Transactions"].as_array().unwrap();
        assert!(listed.iter().all(|item| days_before_as_of(&text(&item["Date"]).replace('/', "-")) < days));
    }
    let reply =
        api.send_with(reqwest::Method::GET, &format!("{path}/GetIncomeAttributes"), &[("limitDays", "30")], None).await;
    assert_eq!(reply.0, 200, "a use-case GET takes it too: {}", reply.1);
    for bad in ["0", "366", "ten", "-1"] {
        let reply = api.post_with(&path, &[("limitDays", bad)], body.clone()).await;
        assert_error(&reply, 400, "INVALID_REQUEST");
        assert_message_names(&reply, "limitDays");
    }
}

/// One account detail transaction, as the test reads it.
#[derive(Clone, Debug)]
struct Tx {
    id: String,
    account: String,
    date: String,
    description: String,
    debit: Option<i64>,
    credit: Option<i64>,
    balance: i64,
}

impl Tx {
    fn age(&self) -> i64 {
        days_before_as_of(&self.date)
    }
}

/// The included accounts (their Balance.Current) and T, from account detail with Days365.
fn scope(detail: &Value, categories: Option<&[&str]>, ids: Option<&[String]>) -> (Vec<i64>, Vec<Tx>) {
    let mut currents = Vec::new();
    let mut all = Vec::new();
    for account in detail["Accounts"].as_array().unwrap() {
        let id = text(&account["Id"]).to_owned();
        if categories.is_some_and(|c| !c.contains(&text(&account["Category"]))) {
            continue;
        }
        if ids.is_some_and(|ids| !ids.contains(&id)) {
            continue;
        }
        currents.push(cents(&account["Balance"]["Current"]));
        for t in account["Transactions"].as_array().unwrap() {
            all.push(Tx {
                id: text(&t["Id"]).to_owned(),
                account: id.clone(),
                date: text(&t["Date"]).to_owned(),
                description: text(&t["Description"]).to_owned(),
                debit: cents_or_none(&t["Debit"]),
                credit: cents_or_none(&t["Credit"]),
                balance: cents(&t["Balance"]),
            });
        }
    }
    (currents, all)
}

/// "First" is by date, then Id.
fn first(rows: Vec<&Tx>) -> Option<&Tx> {
    rows.into_iter().min_by(|a, b| (&a.date, &a.id).cmp(&(&b.date, &b.id)))
}

/// The expected value (as JSON) and the Ids behind it, of one attribute, from its definition.
fn expected(name: &str, currents: &[i64], t: &[Tx]) -> (Value, BTreeSet<String>) {
    let money = |cents: i64| json!(cents as f64 / 100.0);
    let ids = |rows: Vec<&Tx>| rows.iter().map(|tx| tx.id.clone()).collect::<BTreeSet<_>>();
    let rows = |test: &dyn Fn(&Tx) -> bool| t.iter().filter(|tx| test(tx)).collect::<Vec<_>>();
    let average = |sum: i64, count: i64| money((sum as f64 / count as f64).round() as i64);
    let payroll = |tx: &Tx| tx.credit.is_some() && tx.description.starts_with("PAYROLL DEPOSIT ");
    let government = |tx: &Tx| tx.credit.is_some() && tx.description.starts_with("GOVT ");
    // The word NSF, not the letters: E-TRANSFER is not an NSF event.
    let nsf = |tx: &Tx| tx.description.to_lowercase().split(|c: char| !c.is_alphanumeric()).any(|word| word == "nsf");
    let recent = |tx: &Tx| tx.age() <= 89;
    let debit_starting = |prefix: &'static str| move |tx: &Tx| tx.debit.is_some() && tx.description.starts_with(prefix);
    let credits = |rows: &[&Tx]| rows.iter().filter_map(|tx| tx.credit).sum::<i64>();
    let debits = |rows: &[&Tx]| rows.iter().filter_map(|tx| tx.debit).sum::<i64>();
    let none = || json!("NONE_DETECTED");
    match name {
        "account_age_days" => match first(rows(&|_| true)) {
            Some(tx) => (json!(tx.age()), ids(vec![tx])),
            None => (none(), BTreeSet::new()),
        },
        "count_accounts" => (json!(currents.len()), BTreeSet::new()),
        "count_transactions" => (json!(t.len()), ids(rows(&|_| true))),
        "balance_current" => (money(currents.iter().sum()), BTreeSet::new()),
        "balance_max" | "balance_min" => {
            let extreme = if name == "balance_max" {
                t.iter().map(|tx| tx.balance).max()
            } else {
                t.iter().map(|tx| tx.balance).min()
            };
            match extreme {
                Some(value) => (money(value), ids(first(rows(&|tx| tx.balance == value)).into_iter().collect())),
                None => (none(), BTreeSet::new()),
            }
        }
        "count_negative_balance" => {
            let r = rows(&|tx| tx.balance < 0);
            (json!(r.len()), ids(r))
        }
        "count_nsf" => {
            let r = rows(&nsf);
            (json!(r.len()), ids(r))
        }
        "count_nsf_90_days" => {
            let r = rows(&|tx| nsf(tx) && recent(tx));
            (json!(r.len()), ids(r))
        }
        "sum_nsf_fees" => {
            let r = rows(&nsf);
            (money(debits(&r)), ids(r))
        }
        "avg_monthly_deposit" => (average(credits(&rows(&|_| true)), 12), ids(rows(&|tx| tx.credit.is_some()))),
        "avg_monthly_withdrawal" => (average(debits(&rows(&|_| true)), 12), ids(rows(&|tx| tx.debit.is_some()))),
        "sum_deposits_90_days" => {
            let r = rows(&|tx| recent(tx) && tx.credit.is_some());
            (money(credits(&r)), ids(r))
        }
        "sum_withdrawals_90_days" => {
            let r = rows(&|tx| recent(tx) && tx.debit.is_some());
            (money(debits(&r)), ids(r))
        }
        "sum_employer_income" => {
            let r = rows(&payroll);
            (money(credits(&r)), ids(r))
        }
        "count_employer_income" => {
            let r = rows(&payroll);
            (json!(r.len()), ids(r))
        }
        "avg_employer_income" => {
            let r = rows(&payroll);
            if r.is_empty() {
                (none(), BTreeSet::new())
            } else {
                (average(credits(&r), r.len() as i64), ids(r))
            }
        }
        "count_employers" => {
            let r = rows(&payroll);
            let employers: HashSet<&str> = r.iter().map(|tx| &tx.description["PAYROLL DEPOSIT ".len()..]).collect();
            (json!(employers.len()), ids(r))
        }
        "days_since_last_employer_income" => {
            let r = rows(&payroll);
            let latest = r.iter().map(|tx| tx.date.clone()).max();
            match latest {
                Some(date) => {
                    let on_day = first(r.into_iter().filter(|tx| tx.date == date).collect()).unwrap();
                    (json!(days_before_as_of(&date)), ids(vec![on_day]))
                }
                None => (none(), BTreeSet::new()),
            }
        }
        "sum_government_income" => {
            let r = rows(&government);
            if r.is_empty() {
                (none(), BTreeSet::new())
            } else {
                (money(credits(&r)), ids(r))
            }
        }
        "sum_loan_payments" => {
            let r = rows(&debit_starting("LOAN PAYMENT"));
            (money(debits(&r)), ids(r))
        }
        "count_loan_payments" => {
            let r = rows(&debit_starting("LOAN PAYMENT"));
            (json!(r.len()), ids(r))
        }
        "sum_credit_card_payments" => {
            let r = rows(&debit_starting("CREDIT CARD PAYMENT"));
            (money(debits(&r)), ids(r))
        }
        "sum_bill_payments" => {
            let r = rows(&debit_starting("BILL PAYMENT"));
            (money(debits(&r)), ids(r))
        }
        other => panic!("no expectation for {other}"),
    }
}

/// Compares one group of an attributes answer with the definitions, and its AttributesDetail
/// (when `detailed`) with the transactions behind each value.
fn check_group(group: &Value, names: &[&str], currents: &[i64], t: &[Tx], detailed: bool, label: &str) {
    let by_id: HashMap<&str, &Tx> = t.iter().map(|tx| (tx.id.as_str(), tx)).collect();
    for name in names {
        let (value, behind) = expected(name, currents, t);
        let got = &group[*name];
        if value.is_string() {
            assert_eq!(got, &value, "{label}: {name}");
        } else if value.is_u64() || value.is_i64() {
            assert!(got.is_u64() || got.is_i64(), "{label}: {name} is an integer: {got}");
            assert_eq!(got, &value, "{label}: {name}");
        } else {
            assert_eq!(cents(got), cents(&value), "{label}: {name}");
        }
        if !detailed {
            continue;
        }
        let detail = group[DETAIL_KEY]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["Attribute"] == *name)
            .unwrap_or_else(|| panic!("{label}: no {DETAIL_KEY} for {name}"));
        let listed = detail["Transactions"].as_array().unwrap();
        let ids: BTreeSet<String> = listed.iter().map(|tx| text(&tx["TransactionId"]).to_owned()).collect();
        assert_eq!(ids.len(), listed.len(), "{label}: {name} lists each once");
        assert_eq!(ids, behind, "{label}: what is behind {name}");
        for item in listed {
            let tx = by_id[text(&item["TransactionId"])];
            assert_eq!(item["AccountId"], tx.account.as_str());
            assert_eq!(text(&item["Date"]), tx.date.replace('-', "/"));
            assert_eq!(item["Description"], tx.description.as_str());
            assert_eq!(cents_or_none(&item["Debit"]), tx.debit);
            assert_eq!(cents_or_none(&item["Credit"]), tx.credit);
            assert_eq!(cents(&item["Balance"]), tx.balance, "{label}: the balance after it");
        }
    }
}

/// `Filters.AccountCategory` and `Options.AccountFilter`, each when given.
type Restriction<'a> = (Option<&'a [&'a str]>, Option<&'a [String]>);

/// The detail list's key, as the newest documentation spells it (docs/protocol.md#attributes).
const DETAIL_KEY: &str = "AttributeDetails";

#[tokio::test]
async fn every_attribute_matches_its_definition() {
    let api = Api::with(SandboxConfig { tier2: true, ..config() });
    let names = all_names();
    let mut none_detected = HashSet::new();
    for (username, login) in open_users(&api).await {
        let detail = api.all_transactions(&login).await;
        let label = username.as_str();

        // The use-case GETs, over every account.
        let (currents, t) = scope(&detail, None, None);
        for (operation, package) in PACKAGES {
            let reply = settle(&api, &login, reqwest::Method::GET, operation, None).await;
            check_group(&reply.1["Card"], package, &currents, &t, false, label);
            assert!(reply.1["Card"].get(DETAIL_KEY).is_none());
        }
        let all = settle(&api, &login, reqwest::Method::GET, "GetAllAttributes", None).await;
        let fees = t.iter().filter(|tx| tx.description == "NSF FEE").count();
        assert_eq!(all.1["Card"]["count_nsf"], fees, "{label}: NSF events are the NSF fees");
        check_group(&all.1["Card"], &names, &currents, &t, false, label);
        for name in &names {
            if all.1["Card"][*name] == "NONE_DETECTED" {
                none_detected.insert(*name);
            }
        }

        // The custom POST, with filters, in both documented shapes, with every detail.
        let accounts = detail["Accounts"].as_array().unwrap();
        let chequing_and_card: Vec<String> = accounts
            .iter()
            .filter(|a| a["Type"] == "Chequing" || a["Type"] == "CreditCard")
            .map(|a| text(&a["Id"]).to_owned())
            .collect();
        let variants: [Restriction; 4] = [
            (None, None),
            (Some(&["Operations"]), None),
            (None, Some(&chequing_and_card)),
            (Some(&["Operations"]), Some(&chequing_and_card)),
        ];
        for ((categories, ids), documented) in variants.into_iter().flat_map(|v| [(v, false), (v, true)]) {
            let mut body = json!({"Attributes": {"Card": names}});
            if documented {
                body["AttributesDetail"] = json!({"Card": names});
            } else {
                body["MostRecentCached"] = json!(true);
                body["Options"] = json!({"AttributesDetail": names});
            }
            if let Some(categories) = categories {
                body["Filters"] = json!({"AccountCategory": categories});
            }
            if let Some(ids) = ids {
                if documented {
                    body["AccountFilter"] = json!({"AccountID": ids});
                } else {
                    body["Options"]["AccountFilter"] = json!(ids);
                }
            }
            let reply = settle(&api, &login, reqwest::Method::POST, "", Some(body)).await;
            assert_eq!(reply.0, 200, "{}", reply.1);
            let (currents, t) = scope(&detail, categories, ids);
            let label = format!("{username} {categories:?} {ids:?} documented={documented}");
            check_group(&reply.1["Card"], &names, &currents, &t, true, &label);
            assert_eq!(reply.1["HttpStatusCode"], 200);
            assert_eq!(reply.1["RequestId"], login.request_id.as_str());
        }

        // Detail only for the attributes named.
        let body = json!({"Attributes": {"Card": ["count_nsf", "balance_min"]}, "AttributesDetail": ["count_nsf"]});
        let reply = settle(&api, &login, reqwest::Method::POST, "", Some(body)).await;
        let detail_names: Vec<&Value> =
            reply.1["Card"][DETAIL_KEY].as_array().unwrap().iter().map(|d| &d["Attribute"]).collect();
        assert_eq!(detail_names, [&json!("count_nsf")]);
    }
    println!("NONE_DETECTED seen for: {none_detected:?}");
    assert!(none_detected.contains("sum_government_income"), "government income is sometimes absent");
}

#[tokio::test]
async fn attributes_of_an_empty_login_are_none_detected() {
    let api = Api::with(SandboxConfig { banking_transactions: Some(0), tier2: true, ..config() });
    let (login, detail) = prepared(&api, "greatday_nomfa").await;
    let reply = api.use_case(&login, "GetAllAttributes").await;
    let (currents, t) = scope(&detail, None, None);
    assert!(t.is_empty());
    check_group(&reply.1["Card"], &all_names(), &currents, &t, false, "empty");
    for name in [
        "account_age_days",
        "balance_min",
        "balance_max",
        "avg_employer_income",
        "days_since_last_employer_income",
        "sum_government_income",
    ] {
        assert_eq!(reply.1["Card"][name], "NONE_DETECTED", "{name}");
    }
    assert_eq!(reply.1["Card"]["count_transactions"], 0);
    assert_eq!(reply.1["Card"]["sum_nsf_fees"], 0.0);
}

/// The value of `name` folded from the transactions its `AttributesDetail` lists, and nothing
/// else; None for the attributes of the accounts themselves, which list no transaction.
fn from_detail(name: &str, listed: &[&Tx]) -> Option<Value> {
    let money = |cents: i64| json!(cents as f64 / 100.0);
    let average = |sum: i64, count: usize| money((sum as f64 / count as f64).round() as i64);
    let credits = listed.iter().filter_map(|tx| tx.credit).sum::<i64>();
    let debits = listed.iter().filter_map(|tx| tx.debit).sum::<i64>();
    let none = json!("NONE_DETECTED");
    let only = || {
        assert!(listed.len() <= 1, "{name} lists the one transaction behind it");
        listed.first()
    };
    Some(match name {
        "count_accounts" | "balance_current" => return None,
        "count_transactions"
        | "count_negative_balance"
        | "count_nsf"
        | "count_nsf_90_days"
        | "count_employer_income"
        | "count_loan_payments" => json!(listed.len()),
        "account_age_days" | "days_since_last_employer_income" => only().map_or(none, |tx| json!(tx.age())),
        "balance_max" | "balance_min" => only().map_or(none, |tx| money(tx.balance)),
        "sum_nsf_fees"
        | "sum_withdrawals_90_days"
        | "sum_loan_payments"
        | "sum_credit_card_payments"
        | "sum_bill_payments" => money(debits),
        "sum_deposits_90_days" | "sum_employer_income" => money(credits),
        "sum_government_income" if listed.is_empty() => none,
        "sum_government_income" => money(credits),
        "avg_monthly_deposit" => average(credits, 12),
        "avg_monthly_withdrawal" => average(debits, 12),
        "avg_employer_income" if listed.is_empty() => none,
        "avg_employer_income" => average(credits, listed.len()),
        "count_employers" => {
            let employers: HashSet<&str> =
                listed.iter().map(|tx| tx.description.trim_start_matches("PAYROLL DEPOSIT ")).collect();
            json!(employers.len())
        }
        other => panic!("{other}: say how its detail makes its value"),
    })
}

#[tokio::test]
async fn every_attribute_value_is_recomputed_from_its_own_detail() {
    let api = Api::with(SandboxConfig { tier2: true, ..config() });
    let names = all_names();
    for (username, login) in open_users(&api).await {
        let detail = api.all_transactions(&login).await;
        let (_, t) = scope(&detail, None, None);
        let by_id: HashMap<&str, &Tx> = t.iter().map(|tx| (tx.id.as_str(), tx)).collect();
        let body =
            json!({"MostRecentCached": true, "Attributes": {"Card": names}, "Options": {"AttributesDetail": names}});
        let reply = settle(&api, &login, reqwest::Method::POST, "", Some(body)).await;
        assert_eq!(reply.0, 200, "{}", reply.1);
        let card = &reply.1["Card"];
        for name in &names {
            let label = format!("{username}: {name}");
            let entry = card[DETAIL_KEY]
                .as_array()
                .unwrap()
                .iter()
                .find(|entry| entry["Attribute"] == *name)
                .unwrap_or_else(|| panic!("{label}: no {DETAIL_KEY}"));
            let listed: Vec<&Tx> = entry["Transactions"]
                .as_array()
                .unwrap()
                .iter()
                .map(|item| by_id[text(&item["TransactionId"])])
                .collect();
            let got = &card[*name];
            match from_detail(name, &listed) {
                None => assert!(listed.is_empty(), "{label}: an account-level value lists no transaction"),
                Some(value) if value.is_number() && !value.is_f64() => assert_eq!(got, &value, "{label}"),
                Some(value) if value.is_number() => assert_eq!(cents(got), cents(&value), "{label}"),
                Some(value) => assert_eq!(got, &value, "{label}"),
            }
        }
    }
}
