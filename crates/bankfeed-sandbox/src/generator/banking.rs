//! A login's banking accounts and a year of their activity.
//!
//! Activity is planned as signed amounts (credit positive) day by day, oldest first; balances
//! are run afterwards, from an opening balance picked so the account behaves as its role says
//! (the chequing account dips below zero for most logins, savings never does, a card and a loan
//! are owed, i.e. negative). Planning first and running balances last is what lets a
//! transaction-count knob cut or extend the plan and still give consistent running balances.
//!
//! The days after `FIRST_AS_OF` the clock has reached are planned the same way, each from a
//! stream of its own date, so a day's transactions and their Ids do not depend on how far the
//! clock went; some post a few days after their date, as banks post late
//! (docs/sandbox.md#the-clock). An account lists its transactions in the order they posted.

use super::names::{CITIES, CONTACTS, EMPLOYERS, FIRST_NAMES, HYDRO, INTERNET, LAST_NAMES, MERCHANTS, PHONE, STREETS};
use super::{Cents, Guid, Rng};
use crate::world::calendar::{civil, civil_after, AsOf, DAYS};

/// The institution number of `FlinksCapital` on every account.
const INSTITUTION_NUMBER: &str = "777";

/// The fee of every NSF event, in cents.
pub(crate) const NSF_FEE: i64 = 4_800;

pub(crate) struct Banking {
    pub holder: Holder,
    pub accounts: Vec<BankAccount>,
    /// The day the data is as of: every transaction's `day` counts back from it.
    pub clock: AsOf,
}

pub(crate) struct Holder {
    pub name: String,
    pub civic_address: String,
    pub city: &'static str,
    pub province: &'static str,
    pub postal_code: String,
    pub email: String,
    pub phone_number: String,
}

pub(crate) struct BankAccount {
    pub id: Guid,
    pub title: &'static str,
    pub account_number: String,
    pub transit_number: String,
    pub institution_number: &'static str,
    pub overdraft_limit: Cents,
    pub available: Option<Cents>,
    pub current: Cents,
    pub limit: Option<Cents>,
    pub category: &'static str,
    pub kind: &'static str,
    /// Share of past EFT / e-transfer set-ups that found what they needed on this account.
    pub eft_eligible_ratio: f64,
    pub etransfer_eligible_ratio: f64,
    /// In the order they posted, oldest first: the order the running balances were computed in,
    /// and the order `RefreshDelta` counts "after" in. A late transaction comes after others of
    /// later dates.
    pub transactions: Vec<BankTransaction>,
}

impl BankAccount {
    pub(crate) fn last_four_digits(&self) -> &str {
        &self.account_number[self.account_number.len().saturating_sub(4)..]
    }
}

pub(crate) struct BankTransaction {
    pub id: Guid,
    /// Days of its date before the clock.
    pub day: u16,
    /// The description is `head` followed by `tail`: both come from fixed lists, so a year of
    /// 100,000 transactions allocates no text.
    pub head: &'static str,
    pub tail: &'static str,
    /// Credit positive, debit negative; never zero.
    pub amount: i64,
    /// After this transaction.
    pub balance: Cents,
}

impl BankTransaction {
    pub(crate) fn debit(&self) -> Option<Cents> {
        (self.amount < 0).then(|| Cents(-self.amount))
    }

    pub(crate) fn credit(&self) -> Option<Cents> {
        (self.amount > 0).then_some(Cents(self.amount))
    }

    pub(crate) fn description(&self) -> Description<'_> {
        Description(self)
    }
}

/// The description as one text, written without building a String.
pub(crate) struct Description<'a>(&'a BankTransaction);

impl Description<'_> {
    pub(crate) fn starts_with(&self, prefix: &str) -> bool {
        let (head, tail) = (self.0.head, self.0.tail);
        if prefix.len() <= head.len() {
            head.starts_with(prefix)
        } else {
            prefix.starts_with(head) && tail.starts_with(&prefix[head.len()..])
        }
    }

    pub(crate) fn to_text(&self) -> String {
        format!("{}{}", self.0.head, self.0.tail)
    }

    /// Whether `word` (ASCII) is one of the description's words, in any case. Words are split
    /// at anything not a letter or digit, across the head and the tail, without building the
    /// text: attributes ask this of every transaction.
    pub(crate) fn has_word(&self, word: &str) -> bool {
        // How many bytes of `word` the current word has matched; None once it differs.
        let mut matched = Some(0);
        let text = self.0.head.chars().chain(self.0.tail.chars());
        for c in text.chain(std::iter::once(' ')) {
            if c.is_alphanumeric() {
                matched = matched
                    .filter(|&n: &usize| word[n..].starts_with(|w: char| w.eq_ignore_ascii_case(&c)))
                    .map(|n| n + 1);
            } else if matched == Some(word.len()) {
                return true;
            } else {
                matched = Some(0);
            }
        }
        false
    }
}

impl std::fmt::Display for Description<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0.head)?;
        f.write_str(self.0.tail)
    }
}

impl serde::Serialize for Description<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if self.0.tail.is_empty() {
            serializer.serialize_str(self.0.head)
        } else {
            serializer.collect_str(self)
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    Chequing,
    Savings,
    Card,
    Loan,
}

/// One planned transaction, before ids and balances.
#[derive(Clone, Copy)]
struct Planned {
    account: usize,
    /// Its date, in days after `FIRST_AS_OF` (the first year's are 0 or less).
    date: i64,
    /// The day it posts, in the same count: its date, or a few days later.
    posts: i64,
    head: &'static str,
    tail: &'static str,
    amount: i64,
}

impl Banking {
    /// `transactions`: None for a natural year of activity, Some(n) for exactly n in the year
    /// before `FIRST_AS_OF`; the days after it, up to `clock`, have their natural activity
    /// (none with Some(0), so empty accounts stay empty).
    #[expect(clippy::indexing_slicing, reason = "every planned transaction names one of the accounts of roles")]
    pub(crate) fn generate(login: &Rng, transactions: Option<usize>, clock: AsOf) -> Banking {
        let mut profile = login.fork("banking-profile");
        let holder = holder(&mut profile);
        let roles = roles(&mut profile);
        let transit = profile.digits(5);
        let mut accounts: Vec<BankAccount> = roles.iter().map(|role| account(*role, &transit, &mut profile)).collect();

        let mut activity = login.fork("banking-activity");
        let schedule = schedule(&roles, &mut activity);
        let (mut plan, card_unpaid) = natural_plan(&schedule, &mut activity);
        if let Some(count) = transactions {
            resize(&mut plan, count, schedule.card, &mut login.fork("banking-extra"));
        }

        let mut ids = login.fork("banking-ids");
        let mut opening = login.fork("banking-opening");
        let mut by_account: Vec<Vec<(Planned, Guid)>> = roles.iter().map(|_| Vec::new()).collect();
        // The first year's Ids first, account by account, from one stream: as they always were.
        let mut first_year: Vec<Vec<Planned>> = roles.iter().map(|_| Vec::new()).collect();
        for planned in plan {
            first_year[planned.account].push(planned);
        }
        for (account, planned) in first_year.into_iter().enumerate() {
            by_account[account].extend(planned.into_iter().map(|planned| (planned, Guid::draw(&mut ids))));
        }
        if transactions != Some(0) {
            for (planned, id) in later_days(&schedule, card_unpaid, login, clock) {
                by_account[planned.account].push((planned, id));
            }
        }
        for ((account, role), mut planned) in accounts.iter_mut().zip(&roles).zip(by_account) {
            // Stable: within a day, the order they were planned in.
            planned.sort_by_key(|(planned, _)| planned.posts);
            let first: Vec<Planned> = planned.iter().filter(|(p, _)| p.date <= 0).map(|(p, _)| *p).collect();
            let mut balance = opening_balance(*role, &first, &mut opening);
            let today = i64::from(clock.days_after_first());
            account.transactions = planned
                .into_iter()
                .filter_map(|(planned, id)| {
                    balance += planned.amount;
                    // Older than the year before the clock: no longer shown, but counted in.
                    let day = u16::try_from(today - planned.date).ok().filter(|day| *day < DAYS)?;
                    Some(BankTransaction {
                        id,
                        day,
                        head: planned.head,
                        tail: planned.tail,
                        amount: planned.amount,
                        balance: Cents(balance),
                    })
                })
                .collect();
            settle(account, *role, Cents(balance));
        }
        Banking { holder, accounts, clock }
    }
}

/// The chance, in percent, that a transaction of the days after `FIRST_AS_OF` posts late.
const LATE_PERCENT: u64 = 25;

/// The most days a transaction posts after its date.
const MOST_DAYS_LATE: i64 = 3;

/// The activity of the days after `FIRST_AS_OF` up to `clock` that has posted by then, each
/// with its Id. Day `d` is planned from a stream of its own (and the card's balance carried from
/// the days before), so it is the same whatever the clock.
fn later_days(schedule: &Schedule, mut card_unpaid: i64, login: &Rng, clock: AsOf) -> Vec<(Planned, Guid)> {
    let today = i64::from(clock.days_after_first());
    let mut posted = Vec::new();
    for date in 1..=today {
        let mut rng = login.fork(&format!("banking-day-{date}"));
        let (_, _, day_of_month) = civil_after(date);
        let age = i64::from(DAYS) - 1 + date;
        let nsf = usize::from(rng.chance(1));
        let mut day = Vec::new();
        let mut push = |account, head, tail, amount| {
            day.push(Planned { account, date, posts: date, head, tail, amount });
        };
        plan_day(schedule, day_of_month, age, nsf, &mut card_unpaid, &mut rng, &mut push);
        for mut planned in day {
            if rng.chance(LATE_PERCENT) {
                planned.posts += rng.range(1, MOST_DAYS_LATE);
            }
            let id = Guid::draw(&mut rng);
            if planned.posts <= today {
                posted.push((planned, id));
            }
        }
    }
    posted
}

fn holder(rng: &mut Rng) -> Holder {
    let first = *rng.pick(FIRST_NAMES);
    let last = *rng.pick(LAST_NAMES);
    let (city, province, letter, area) = *rng.pick(CITIES);
    let letter_of = |rng: &mut Rng| char::from(b'A' + rng.index(26) as u8);
    let digit_of = |rng: &mut Rng| char::from(b'0' + rng.index(10) as u8);
    let postal_code =
        format!("{letter}{}{} {}{}{}", digit_of(rng), letter_of(rng), digit_of(rng), letter_of(rng), digit_of(rng));
    let ascii = |name: &str| -> String {
        name.chars()
            .map(|c| match c {
                'é' | 'è' | 'ê' => 'e',
                'ô' => 'o',
                other => other.to_ascii_lowercase(),
            })
            .collect()
    };
    Holder {
        name: format!("{first} {last}"),
        civic_address: format!("{} {}", rng.range(1, 9_999), rng.pick(STREETS)),
        city,
        province,
        postal_code,
        email: format!("{}.{}@example.com", ascii(first), ascii(last)),
        phone_number: format!("+1 {area}-555-{}", rng.digits(4)),
    }
}

/// Chequing and a card always; often savings, sometimes a loan or a second savings account;
/// three to five accounts in all.
fn roles(rng: &mut Rng) -> Vec<Role> {
    let mut roles = vec![Role::Chequing];
    if rng.chance(75) {
        roles.push(Role::Savings);
    }
    if rng.chance(25) {
        roles.push(Role::Savings);
    }
    roles.push(Role::Card);
    if rng.chance(40) {
        roles.push(Role::Loan);
    }
    if roles.len() < 3 {
        roles.insert(1, Role::Savings);
    }
    roles
}

/// A card's number as the service shows it: its first six digits, six asterisks, its last four
/// (`451012******4242`), in every answer that names the account.
fn masked_card_number(number: &str) -> String {
    let first = number.get(..6).unwrap_or_default();
    let last = number.get(number.len().saturating_sub(4)..).unwrap_or_default();
    format!("{first}******{last}")
}

fn card_index(roles: &[Role]) -> usize {
    // roles() always adds a card, so the default is never taken.
    roles.iter().position(|role| *role == Role::Card).unwrap_or_default()
}

fn account(role: Role, transit: &str, rng: &mut Rng) -> BankAccount {
    let id = Guid::draw(rng);
    let (title, category, kind, account_number) = match role {
        Role::Chequing => (
            *rng.pick(&["Chequing", "Everyday Chequing", "Primary Chequing Account"]),
            "Operations",
            "Chequing",
            rng.digits(7),
        ),
        Role::Savings => {
            (*rng.pick(&["Savings", "High Interest Savings", "eSavings"]), "Operations", "Savings", rng.digits(7))
        }
        Role::Card => (
            *rng.pick(&["Visa Infinite", "Visa Classic", "Visa Cash Back"]),
            "Credits",
            "CreditCard",
            masked_card_number(&format!("4510{}", rng.digits(12))),
        ),
        Role::Loan => ("Personal Loan", "Products", "LoanPersonal", rng.digits(9)),
    };
    let overdraft_limit = match role {
        Role::Chequing => *rng.pick(&[0, 25_000, 50_000, 100_000]),
        _ => 0,
    };
    let limit = match role {
        Role::Card => Some(Cents(*rng.pick(&[300_000, 500_000, 1_000_000, 1_500_000]))),
        _ => None,
    };
    let (eft, etransfer) = match role {
        Role::Chequing => (1.0, 1.0),
        Role::Savings => (0.85, 0.5),
        Role::Card | Role::Loan => (0.0, 0.0),
    };
    BankAccount {
        id,
        title,
        account_number,
        transit_number: transit.to_owned(),
        institution_number: INSTITUTION_NUMBER,
        overdraft_limit: Cents(overdraft_limit),
        available: None,
        current: Cents(0),
        limit,
        category,
        kind,
        eft_eligible_ratio: eft,
        etransfer_eligible_ratio: etransfer,
        transactions: Vec::new(),
    }
}

/// The balance before the first transaction, chosen from the account's planned flows so the
/// account's path has the shape of its role.
fn opening_balance(role: Role, planned: &[Planned], rng: &mut Rng) -> i64 {
    let lowest_prefix = planned
        .iter()
        .scan(0i64, |sum, planned| {
            *sum += planned.amount;
            Some(*sum)
        })
        .min();
    match role {
        Role::Chequing => {
            // Most logins overdraw at some point: the lowest balance of the year is negative.
            let lowest = if rng.chance(80) { -rng.range(2_000, 40_000) } else { rng.range(15_000, 150_000) };
            match lowest_prefix {
                Some(prefix) => lowest - prefix,
                None => rng.range(50_000, 300_000),
            }
        }
        Role::Savings => {
            let open = rng.range(100_000, 1_500_000);
            match lowest_prefix {
                Some(prefix) if open + prefix < 0 => -prefix + rng.range(5_000, 50_000),
                _ => open,
            }
        }
        Role::Card => -rng.range(20_000, 200_000),
        Role::Loan => -rng.range(500_000, 2_500_000),
    }
}

fn settle(account: &mut BankAccount, role: Role, current: Cents) {
    account.current = current;
    account.available = match role {
        Role::Chequing => Some(Cents(current.0 + account.overdraft_limit.0)),
        Role::Savings => Some(current),
        Role::Card => account.limit.map(|limit| Cents(limit.0 + current.0)),
        Role::Loan => None,
    };
}

/// A bill paid every month on its own day.
struct Bill {
    payee: &'static str,
    low: i64,
    high: i64,
    day_of_month: u32,
}

/// What a login's activity repeats: its pay, bills and transfers, drawn once.
struct Schedule {
    chequing: usize,
    card: usize,
    savings: Option<usize>,
    all_savings: Vec<usize>,
    loan: Option<usize>,
    employer: &'static str,
    salary: i64,
    phase: i64,
    /// A second, smaller job for some logins, paid on other weeks: (employer, pay, phase).
    second: Option<(&'static str, i64, i64)>,
    bills: Vec<Bill>,
    card_day: u32,
    loan_day: u32,
    loan_payment: i64,
    savings_day: u32,
    savings_amount: i64,
    child_benefit: Option<i64>,
    housing: &'static str,
    housing_amount: i64,
}

#[expect(clippy::indexing_slicing, reason = "indexes below roles.len() and EMPLOYERS.len(), by construction")]
fn schedule(roles: &[Role], rng: &mut Rng) -> Schedule {
    let employer = *rng.pick(EMPLOYERS);
    let salary = rng.range(120_000, 340_000);
    let phase = rng.range(0, 13);
    let second = rng.chance(30).then(|| {
        let mut other = *rng.pick(EMPLOYERS);
        if other == employer {
            other = EMPLOYERS[EMPLOYERS.iter().position(|e| *e == other).map_or(0, |at| (at + 1) % EMPLOYERS.len())];
        }
        (other, rng.range(40_000, 120_000), (phase + 7) % 14)
    });
    let bills: Vec<Bill> = [HYDRO, PHONE, INTERNET]
        .iter()
        .map(|list| {
            let (payee, low, high) = *rng.pick(list);
            Bill { payee, low, high, day_of_month: rng.range(1, 28) as u32 }
        })
        .collect();
    let card_day = rng.range(3, 27) as u32;
    let loan_day = rng.range(1, 28) as u32;
    let loan_payment = rng.range(25_000, 65_000);
    let savings_day = rng.range(1, 28) as u32;
    let savings_amount = rng.range(5_000, 50_000);
    let child_benefit = rng.chance(33).then(|| rng.range(15_000, 70_000));
    // Housing takes about half of the pay, so the balance does not pile up over the year.
    let housing = if rng.chance(50) { "MORTGAGE PAYMENT" } else { "RENT PAYMENT" };
    let housing_amount = salary * 26 / 12 * rng.range(45, 60) / 100;
    Schedule {
        chequing: 0,
        card: card_index(roles),
        savings: roles.iter().position(|role| *role == Role::Savings),
        all_savings: (0..roles.len()).filter(|index| roles[*index] == Role::Savings).collect(),
        loan: roles.iter().position(|role| *role == Role::Loan),
        employer,
        salary,
        phase,
        second,
        bills,
        card_day,
        loan_day,
        loan_payment,
        savings_day,
        savings_amount,
        child_benefit,
        housing,
        housing_amount,
    }
}

/// The year before `FIRST_AS_OF` in date order (oldest first), several accounts interleaved,
/// and what the card owes at its end.
fn natural_plan(schedule: &Schedule, rng: &mut Rng) -> (Vec<Planned>, i64) {
    let mut nsf_days: Vec<u16> = (0..rng.range(2, 4)).map(|_| rng.range(0, i64::from(DAYS) - 1) as u16).collect();
    nsf_days.sort_unstable();

    let mut plan = Vec::with_capacity(600);
    let mut card_unpaid = 0i64;
    for day in (0..DAYS).rev() {
        let (_, _, day_of_month) = civil(day);
        let age = i64::from(DAYS - 1 - day);
        let date = -i64::from(day);
        let nsf = nsf_days.iter().filter(|nsf| **nsf == day).count();
        let mut push = |account, head, tail, amount| {
            plan.push(Planned { account, date, posts: date, head, tail, amount });
        };
        plan_day(schedule, day_of_month, age, nsf, &mut card_unpaid, rng, &mut push);
    }
    (plan, card_unpaid)
}

/// One day's activity: `age` is the day's number from the first day of data, `nsf` how many NSF
/// fees fall on it, `card_unpaid` what the card owes (paid on the card's day).
fn plan_day(
    schedule: &Schedule,
    day_of_month: u32,
    age: i64,
    nsf: usize,
    card_unpaid: &mut i64,
    rng: &mut Rng,
    push: &mut impl FnMut(usize, &'static str, &'static str, i64),
) {
    let Schedule { chequing, card, savings, loan, .. } = *schedule;
    if age % 14 == schedule.phase {
        // Pay varies a little with overtime and deductions.
        let pay = schedule.salary + rng.range(-2_500, 2_500);
        push(chequing, "PAYROLL DEPOSIT ", schedule.employer, pay);
    }
    if let Some((other, pay, phase)) = schedule.second {
        if age % 14 == phase {
            push(chequing, "PAYROLL DEPOSIT ", other, pay);
        }
    }
    if let Some(amount) = schedule.child_benefit {
        if day_of_month == 20 {
            push(chequing, "GOVT CANADA CCB", "", amount);
        }
    }
    if day_of_month == 1 {
        push(chequing, schedule.housing, "", -schedule.housing_amount);
    }
    for bill in &schedule.bills {
        if day_of_month == bill.day_of_month {
            let amount = rng.range(bill.low, bill.high);
            push(chequing, "BILL PAYMENT ", bill.payee, -amount);
        }
    }
    if day_of_month == schedule.card_day && *card_unpaid > 0 {
        push(chequing, "CREDIT CARD PAYMENT VISA", "", -*card_unpaid);
        push(card, "PAYMENT - THANK YOU", "", *card_unpaid);
        *card_unpaid = 0;
    }
    if let Some(loan) = loan {
        if day_of_month == schedule.loan_day {
            push(chequing, "LOAN PAYMENT", "", -schedule.loan_payment);
            push(loan, "PAYMENT RECEIVED", "", schedule.loan_payment);
        }
        if day_of_month == 1 {
            push(loan, "INTEREST CHARGE", "", -rng.range(4_000, 15_000));
        }
    }
    if let Some(savings) = savings {
        if day_of_month == schedule.savings_day {
            push(chequing, "TRANSFER TO SAVINGS", "", -schedule.savings_amount);
            push(savings, "TRANSFER FROM CHEQUING", "", schedule.savings_amount);
        }
    }
    if day_of_month == 28 {
        for savings in &schedule.all_savings {
            push(*savings, "INTEREST", "", rng.range(50, 2_500));
        }
    }
    if rng.chance(7) {
        let contact = *rng.pick(CONTACTS);
        if rng.chance(60) {
            let amount = rng.range(2_000, 30_000);
            push(chequing, "E-TRANSFER SENT ", contact, -amount);
        } else {
            let amount = rng.range(2_000, 40_000);
            push(chequing, "E-TRANSFER RECEIVED ", contact, amount);
        }
    }
    if rng.chance(6) {
        let amount = rng.range(2, 20) * 1_000;
        push(chequing, "ATM WITHDRAWAL", "", -amount);
    }
    for _ in 0..nsf {
        push(chequing, "NSF FEE", "", -NSF_FEE);
    }
    let mut purchases = 0;
    while purchases < 3 && rng.chance(33) {
        purchases += 1;
        let amount = purchase(rng);
        *card_unpaid += amount.1;
        push(card, "POS PURCHASE ", amount.0, -amount.1);
    }
}

fn purchase(rng: &mut Rng) -> (&'static str, i64) {
    let (merchant, low, high) = *rng.pick(MERCHANTS);
    (merchant, rng.range(low, high))
}

/// Exactly `count` transactions: an even sample of the plan when it is longer (so every kind of
/// activity keeps its share), else the plan plus card purchases on random days.
fn resize(plan: &mut Vec<Planned>, count: usize, card: usize, rng: &mut Rng) {
    let len = plan.len();
    if count < len {
        let mut index = 0;
        let mut kept = 0;
        plan.retain(|_| {
            let keep = kept < count && index == kept * len / count;
            index += 1;
            if keep {
                kept += 1;
            }
            keep
        });
        return;
    }
    plan.reserve(count - len);
    for _ in len..count {
        let date = -rng.range(0, i64::from(DAYS) - 1);
        let (merchant, amount) = purchase(rng);
        plan.push(Planned { account: card, date, posts: date, head: "POS PURCHASE ", tail: merchant, amount: -amount });
    }
    // Stable, so the planned order within a day is kept and the extras come after it.
    plan.sort_by_key(|planned| planned.date);
}

#[cfg(test)]
mod description_tests {
    use super::*;

    fn described(head: &'static str, tail: &'static str) -> BankTransaction {
        BankTransaction { id: Guid(0), day: 0, head, tail, amount: 1, balance: Cents(0) }
    }

    #[test]
    fn words_are_found_in_any_case_across_head_and_tail() {
        for (head, tail) in
            [("NSF FEE", ""), ("nsf-charge", ""), ("RETURNED (", "NSF)"), ("RETURNED N", "SF"), ("", "Nsf")]
        {
            assert!(described(head, tail).description().has_word("NSF"), "{head:?} {tail:?}");
        }
        for (head, tail) in
            [("E-TRANSFER SENT ", "ACME"), ("NSFX", ""), ("XNSF", ""), ("NS", "F2"), ("", ""), ("éNSF", "")]
        {
            assert!(!described(head, tail).description().has_word("NSF"), "{head:?} {tail:?}");
        }
    }
}
