//! The attribute catalogue: every attribute the sandbox computes, as one table of name,
//! description, value and the transactions behind the value, plus the use-case packages.
//!
//! Each value is folded from exactly the transactions its `AttributesDetail` lists (or, for the
//! two account-level attributes, from the accounts, with an empty detail), so value and detail
//! cannot disagree. Definitions are exact so a test can recompute every value from GetAccountsDetail
//! (`Days365`): T is every transaction of the included accounts; "the last 90 days" is
//! A − Date ≤ 89 days with A the clock's day; money is rounded to cents half away from zero after
//! computing; payroll is a credit whose description starts `PAYROLL DEPOSIT ` (the employer is
//! the rest), government income a credit starting `GOVT `, NSF any transaction whose
//! description has the word `NSF` in any case (a word, so that every `TRANSFER` is not an NSF
//! event), loan payments debits starting `LOAN PAYMENT`, card
//! payments debits starting `CREDIT CARD PAYMENT`, bills debits starting `BILL PAYMENT`.

use std::cmp::Reverse;
use std::collections::HashSet;

use crate::generator::{divide_rounded, BankAccount, BankTransaction};

/// Months in the year of data, for the monthly averages.
const MONTHS: i64 = 12;
/// "The last 90 days": day offsets 0..=89.
const RECENT_DAYS: u16 = 89;

/// A transaction of an included account.
#[derive(Clone, Copy)]
pub(crate) struct Row<'a> {
    pub account: &'a BankAccount,
    pub transaction: &'a BankTransaction,
}

impl Row<'_> {
    /// Oldest date first, then Id: the order "first" means in the definitions, and the order
    /// of every AttributesDetail list.
    fn order(&self) -> (Reverse<u16>, u128) {
        (Reverse(self.transaction.day), self.transaction.id.0)
    }

    fn credit(&self) -> i64 {
        self.transaction.credit().map_or(0, |cents| cents.0)
    }

    fn debit(&self) -> i64 {
        self.transaction.debit().map_or(0, |cents| cents.0)
    }

    fn starts_with(&self, prefix: &str) -> bool {
        self.transaction.description().starts_with(prefix)
    }

    fn recent(&self) -> bool {
        self.transaction.day <= RECENT_DAYS
    }
}

/// What attributes are computed over.
pub(crate) struct Scope<'a> {
    pub accounts: Vec<&'a BankAccount>,
    /// T: every transaction of `accounts`, sorted by [`Row::order`].
    pub rows: Vec<Row<'a>>,
}

impl<'a> Scope<'a> {
    pub(crate) fn new(accounts: Vec<&'a BankAccount>) -> Scope<'a> {
        let mut rows: Vec<Row<'a>> = accounts
            .iter()
            .flat_map(|account| account.transactions.iter().map(move |transaction| Row { account, transaction }))
            .collect();
        rows.sort_by_key(Row::order);
        Scope { accounts, rows }
    }

    fn matching(&self, test: impl Fn(&Row) -> bool) -> Vec<Row<'a>> {
        self.rows.iter().copied().filter(|row| test(row)).collect()
    }
}

/// A computed attribute value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Value {
    /// A count or a number of days: an integer on the wire.
    Count(i64),
    /// Cents: a number with at most 2 decimals on the wire.
    Money(i64),
    /// The string `NONE_DETECTED`: nothing to compute the value from.
    NoneDetected,
}

impl serde::Serialize for Value {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Value::Count(count) => serializer.serialize_i64(*count),
            Value::Money(cents) => serializer.serialize_f64(*cents as f64 / 100.0),
            Value::NoneDetected => serializer.serialize_str("NONE_DETECTED"),
        }
    }
}

/// An attribute: its value is always computed from the transactions its detail lists, so the
/// two cannot disagree.
pub(crate) struct Attribute {
    pub name: &'static str,
    pub description: &'static str,
    source: Source,
}

/// What an attribute is computed from.
enum Source {
    /// The transactions `select` picks (what `AttributesDetail` lists), folded by `reduce`.
    Rows { select: for<'a> fn(&Scope<'a>) -> Vec<Row<'a>>, reduce: fn(&[Row<'_>]) -> Value },
    /// The included accounts themselves: no transaction lies behind the value.
    Accounts(fn(&[&BankAccount]) -> Value),
}

impl Attribute {
    pub(crate) fn value(&self, scope: &Scope<'_>) -> Value {
        match self.source {
            Source::Rows { select, reduce } => reduce(&select(scope)),
            Source::Accounts(compute) => compute(&scope.accounts),
        }
    }

    /// The transactions behind the value, in [`Row::order`]: its `AttributesDetail`.
    pub(crate) fn behind<'a>(&self, scope: &Scope<'a>) -> Vec<Row<'a>> {
        match self.source {
            Source::Rows { select, .. } => select(scope),
            Source::Accounts(_) => Vec::new(),
        }
    }
}

fn payroll(row: &Row) -> bool {
    row.credit() > 0 && row.starts_with(PAYROLL)
}

fn government(row: &Row) -> bool {
    row.credit() > 0 && row.starts_with("GOVT ")
}

/// Words are split at anything not a letter or digit: `NSF FEE`, `nsf-charge` and `(NSF)`
/// count, `E-TRANSFER` does not.
fn nsf(row: &Row) -> bool {
    row.transaction.description().has_word("NSF")
}

fn loan_payment(row: &Row) -> bool {
    row.debit() > 0 && row.starts_with("LOAN PAYMENT")
}

fn card_payment(row: &Row) -> bool {
    row.debit() > 0 && row.starts_with("CREDIT CARD PAYMENT")
}

fn bill(row: &Row) -> bool {
    row.debit() > 0 && row.starts_with("BILL PAYMENT")
}

const PAYROLL: &str = "PAYROLL DEPOSIT ";

fn count(rows: &[Row]) -> Value {
    Value::Count(rows.len() as i64)
}

fn credits(rows: &[Row]) -> i64 {
    rows.iter().map(Row::credit).sum()
}

fn debits(rows: &[Row]) -> i64 {
    rows.iter().map(Row::debit).sum()
}

fn sum_credits(rows: &[Row]) -> Value {
    Value::Money(credits(rows))
}

fn sum_debits(rows: &[Row]) -> Value {
    Value::Money(debits(rows))
}

/// The day offset of the one row behind a "days since" value.
fn age_of_first(rows: &[Row]) -> Value {
    match rows.first() {
        Some(row) => Value::Count(i64::from(row.transaction.day)),
        None => Value::NoneDetected,
    }
}

/// The balance of the one row behind a balance extreme.
fn balance_of_first(rows: &[Row]) -> Value {
    match rows.first() {
        Some(row) => Value::Money(row.transaction.balance.0),
        None => Value::NoneDetected,
    }
}

fn none_if_empty(rows: &[Row], value: impl FnOnce() -> Value) -> Value {
    if rows.is_empty() {
        Value::NoneDetected
    } else {
        value()
    }
}

/// The first row (by date, then Id) whose balance is the extreme `pick` finds.
fn balance_holder<'a>(scope: &Scope<'a>, pick: fn(i64, i64) -> bool) -> Vec<Row<'a>> {
    let mut best: Option<Row<'a>> = None;
    for row in &scope.rows {
        let better = match best {
            None => true,
            Some(best) => pick(row.transaction.balance.0, best.transaction.balance.0),
        };
        if better {
            best = Some(*row);
        }
    }
    best.into_iter().collect()
}

/// The first (by Id) payroll deposit of the newest day with one.
fn latest_payroll<'a>(scope: &Scope<'a>) -> Vec<Row<'a>> {
    let payrolls = scope.matching(payroll);
    let Some(newest) = payrolls.iter().map(|row| row.transaction.day).min() else {
        return Vec::new();
    };
    payrolls.into_iter().find(|row| row.transaction.day == newest).into_iter().collect()
}

/// The catalogue, in the order `GetAllAttributes` answers with.
pub(crate) const CATALOGUE: &[Attribute] = &[
    Attribute {
        name: "account_age_days",
        description: "Days from the oldest transaction to the as-of date (the sandbox's clock)",
        source: Source::Rows {
            select: |scope| scope.rows.first().copied().into_iter().collect(),
            reduce: age_of_first,
        },
    },
    Attribute {
        name: "count_accounts",
        description: "Number of accounts included",
        source: Source::Accounts(|accounts| Value::Count(accounts.len() as i64)),
    },
    Attribute {
        name: "count_transactions",
        description: "Number of transactions of the included accounts",
        source: Source::Rows { select: |scope| scope.rows.clone(), reduce: count },
    },
    Attribute {
        name: "balance_current",
        description: "Sum of the current balances of the included accounts",
        source: Source::Accounts(|accounts| Value::Money(accounts.iter().map(|account| account.current.0).sum())),
    },
    Attribute {
        name: "balance_max",
        description: "Highest running balance after any transaction",
        source: Source::Rows {
            select: |scope| balance_holder(scope, |candidate, best| candidate > best),
            reduce: balance_of_first,
        },
    },
    Attribute {
        name: "balance_min",
        description: "Lowest running balance after any transaction",
        source: Source::Rows {
            select: |scope| balance_holder(scope, |candidate, best| candidate < best),
            reduce: balance_of_first,
        },
    },
    Attribute {
        name: "count_negative_balance",
        description: "Number of transactions that left a balance below zero",
        source: Source::Rows { select: |scope| scope.matching(|row| row.transaction.balance.0 < 0), reduce: count },
    },
    Attribute {
        name: "count_nsf",
        description: "Number of NSF (non-sufficient funds) transactions: the word NSF, any case",
        source: Source::Rows { select: |scope| scope.matching(nsf), reduce: count },
    },
    Attribute {
        name: "count_nsf_90_days",
        description: "Number of NSF transactions in the last 90 days",
        source: Source::Rows { select: |scope| scope.matching(|row| nsf(row) && row.recent()), reduce: count },
    },
    Attribute {
        name: "sum_nsf_fees",
        description: "Sum of the debits of NSF transactions",
        source: Source::Rows { select: |scope| scope.matching(nsf), reduce: sum_debits },
    },
    Attribute {
        name: "avg_monthly_deposit",
        description: "Sum of all credits divided by 12",
        source: Source::Rows {
            select: |scope| scope.matching(|row| row.credit() > 0),
            reduce: |rows| Value::Money(divide_rounded(credits(rows), MONTHS)),
        },
    },
    Attribute {
        name: "avg_monthly_withdrawal",
        description: "Sum of all debits divided by 12",
        source: Source::Rows {
            select: |scope| scope.matching(|row| row.debit() > 0),
            reduce: |rows| Value::Money(divide_rounded(debits(rows), MONTHS)),
        },
    },
    Attribute {
        name: "sum_deposits_90_days",
        description: "Sum of the credits of the last 90 days",
        source: Source::Rows {
            select: |scope| scope.matching(|row| row.recent() && row.credit() > 0),
            reduce: sum_credits,
        },
    },
    Attribute {
        name: "sum_withdrawals_90_days",
        description: "Sum of the debits of the last 90 days",
        source: Source::Rows {
            select: |scope| scope.matching(|row| row.recent() && row.debit() > 0),
            reduce: sum_debits,
        },
    },
    Attribute {
        name: "sum_employer_income",
        description: "Sum of payroll deposits",
        source: Source::Rows { select: |scope| scope.matching(payroll), reduce: sum_credits },
    },
    Attribute {
        name: "count_employer_income",
        description: "Number of payroll deposits",
        source: Source::Rows { select: |scope| scope.matching(payroll), reduce: count },
    },
    Attribute {
        name: "avg_employer_income",
        description: "Mean payroll deposit",
        source: Source::Rows {
            select: |scope| scope.matching(payroll),
            reduce: |rows| none_if_empty(rows, || Value::Money(divide_rounded(credits(rows), rows.len() as i64))),
        },
    },
    Attribute {
        name: "count_employers",
        description: "Number of distinct employers paying payroll deposits",
        source: Source::Rows {
            select: |scope| scope.matching(payroll),
            reduce: |rows| {
                let employers: HashSet<String> = rows
                    .iter()
                    .map(|row| {
                        let text = row.transaction.description().to_text();
                        text.strip_prefix(PAYROLL).unwrap_or(&text).to_owned()
                    })
                    .collect();
                Value::Count(employers.len() as i64)
            },
        },
    },
    Attribute {
        name: "days_since_last_employer_income",
        description: "Days from the latest payroll deposit to the as-of date",
        source: Source::Rows { select: latest_payroll, reduce: age_of_first },
    },
    Attribute {
        name: "sum_government_income",
        description: "Sum of government deposits (GOVT ...)",
        source: Source::Rows {
            select: |scope| scope.matching(government),
            reduce: |rows| none_if_empty(rows, || sum_credits(rows)),
        },
    },
    Attribute {
        name: "sum_loan_payments",
        description: "Sum of loan payments",
        source: Source::Rows { select: |scope| scope.matching(loan_payment), reduce: sum_debits },
    },
    Attribute {
        name: "count_loan_payments",
        description: "Number of loan payments",
        source: Source::Rows { select: |scope| scope.matching(loan_payment), reduce: count },
    },
    Attribute {
        name: "sum_credit_card_payments",
        description: "Sum of credit card payments",
        source: Source::Rows { select: |scope| scope.matching(card_payment), reduce: sum_debits },
    },
    Attribute {
        name: "sum_bill_payments",
        description: "Sum of bill payments",
        source: Source::Rows { select: |scope| scope.matching(bill), reduce: sum_debits },
    },
];

/// The use-case packages: operation → attribute names, in answer order.
pub(crate) const PACKAGES: &[(&str, &[&str])] = &[
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

/// The operation that answers every attribute, for Tier 2 packages only.
pub(crate) const ALL_ATTRIBUTES: &str = "GetAllAttributes";

/// Business use-case operations: named by the service, not offered by the sandbox.
pub(crate) const BUSINESS_OPERATIONS: &[&str] = &["GetBusinessAnalysisAttributes", "GetAllBusinessAttributes"];

pub(crate) fn find(name: &str) -> Option<&'static Attribute> {
    CATALOGUE.iter().find(|attribute| attribute.name == name)
}

/// Every attribute the sandbox computes: (name, one-line description), in catalogue order.
pub fn attribute_catalogue() -> Vec<(&'static str, &'static str)> {
    CATALOGUE.iter().map(|attribute| (attribute.name, attribute.description)).collect()
}

/// Every attribute operation of the sandbox and the names it answers with (group `Card`), the
/// Tier 2 `GetAllAttributes` last.
pub fn attribute_packages() -> Vec<(&'static str, Vec<&'static str>)> {
    PACKAGES
        .iter()
        .map(|(operation, names)| (*operation, names.to_vec()))
        .chain(std::iter::once((ALL_ATTRIBUTES, CATALOGUE.iter().map(|attribute| attribute.name).collect())))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packages_name_only_catalogued_attributes() {
        assert_eq!(CATALOGUE.len(), 24);
        for (operation, names) in PACKAGES {
            for name in *names {
                assert!(find(name).is_some(), "{operation}: {name}");
            }
        }
        let unique: HashSet<_> = CATALOGUE.iter().map(|a| a.name).collect();
        assert_eq!(unique.len(), CATALOGUE.len());
    }
}
