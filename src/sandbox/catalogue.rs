//! The attribute catalogue: every attribute the sandbox computes, as one table of name,
//! description, value and the transactions behind the value, plus the use-case packages.
//!
//! Definitions are exact so a test can recompute every value from GetAccountsDetail
//! (`Days365`): T is every transaction of the included accounts; "the last 90 days" is
//! A − Date ≤ 89 days with A = 2026-11-20; money is rounded to cents half away from zero after
//! computing; payroll is a credit whose description starts `PAYROLL DEPOSIT ` (the employer is
//! the rest), government income a credit starting `GOVT `, NSF any transaction whose
//! description has the word `NSF` in any case (a word, so that every `TRANSFER` is not an NSF
//! event), loan payments debits starting `LOAN PAYMENT`, card
//! payments debits starting `CREDIT CARD PAYMENT`, bills debits starting `BILL PAYMENT`.

use std::cmp::Reverse;
use std::collections::HashSet;

use super::generator::{divide_rounded, BankAccount, BankTransaction};

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
    pub fn new(accounts: Vec<&'a BankAccount>) -> Scope<'a> {
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

pub(crate) struct Attribute {
    pub name: &'static str,
    pub description: &'static str,
    pub value: for<'a> fn(&Scope<'a>) -> Value,
    pub behind: for<'a> fn(&Scope<'a>) -> Vec<Row<'a>>,
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

fn sum<'a>(rows: &[Row<'a>], amount: impl Fn(&Row<'a>) -> i64) -> i64 {
    rows.iter().map(amount).sum()
}

fn count(rows: Vec<Row>) -> Value {
    Value::Count(rows.len() as i64)
}

fn none_if_empty<T>(rows: &[T], value: impl FnOnce() -> Value) -> Value {
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

fn latest_payroll<'a>(scope: &Scope<'a>) -> Option<Row<'a>> {
    let payrolls = scope.matching(payroll);
    let newest = payrolls.iter().map(|row| row.transaction.day).min()?;
    payrolls.into_iter().find(|row| row.transaction.day == newest)
}

/// The catalogue, in the order `GetAllAttributes` answers with.
pub(crate) const CATALOGUE: &[Attribute] = &[
    Attribute {
        name: "account_age_days",
        description: "Days from the oldest transaction to the as-of date (2026-11-20)",
        value: |scope| match scope.rows.first() {
            Some(row) => Value::Count(i64::from(row.transaction.day)),
            None => Value::NoneDetected,
        },
        behind: |scope| scope.rows.first().copied().into_iter().collect(),
    },
    Attribute {
        name: "count_accounts",
        description: "Number of accounts included",
        value: |scope| Value::Count(scope.accounts.len() as i64),
        behind: |_| Vec::new(),
    },
    Attribute {
        name: "count_transactions",
        description: "Number of transactions of the included accounts",
        value: |scope| Value::Count(scope.rows.len() as i64),
        behind: |scope| scope.rows.clone(),
    },
    Attribute {
        name: "balance_current",
        description: "Sum of the current balances of the included accounts",
        value: |scope| Value::Money(scope.accounts.iter().map(|account| account.current.0).sum()),
        behind: |_| Vec::new(),
    },
    Attribute {
        name: "balance_max",
        description: "Highest running balance after any transaction",
        value: |scope| match scope.rows.iter().map(|row| row.transaction.balance.0).max() {
            Some(max) => Value::Money(max),
            None => Value::NoneDetected,
        },
        behind: |scope| balance_holder(scope, |candidate, best| candidate > best),
    },
    Attribute {
        name: "balance_min",
        description: "Lowest running balance after any transaction",
        value: |scope| match scope.rows.iter().map(|row| row.transaction.balance.0).min() {
            Some(min) => Value::Money(min),
            None => Value::NoneDetected,
        },
        behind: |scope| balance_holder(scope, |candidate, best| candidate < best),
    },
    Attribute {
        name: "count_negative_balance",
        description: "Number of transactions that left a balance below zero",
        value: |scope| count(scope.matching(|row| row.transaction.balance.0 < 0)),
        behind: |scope| scope.matching(|row| row.transaction.balance.0 < 0),
    },
    Attribute {
        name: "count_nsf",
        description: "Number of NSF (non-sufficient funds) transactions: the word NSF, any case",
        value: |scope| count(scope.matching(nsf)),
        behind: |scope| scope.matching(nsf),
    },
    Attribute {
        name: "count_nsf_90_days",
        description: "Number of NSF transactions in the last 90 days",
        value: |scope| count(scope.matching(|row| nsf(row) && row.recent())),
        behind: |scope| scope.matching(|row| nsf(row) && row.recent()),
    },
    Attribute {
        name: "sum_nsf_fees",
        description: "Sum of the debits of NSF transactions",
        value: |scope| Value::Money(sum(&scope.matching(nsf), Row::debit)),
        behind: |scope| scope.matching(nsf),
    },
    Attribute {
        name: "avg_monthly_deposit",
        description: "Sum of all credits divided by 12",
        value: |scope| Value::Money(divide_rounded(sum(&scope.rows, Row::credit), MONTHS)),
        behind: |scope| scope.matching(|row| row.credit() > 0),
    },
    Attribute {
        name: "avg_monthly_withdrawal",
        description: "Sum of all debits divided by 12",
        value: |scope| Value::Money(divide_rounded(sum(&scope.rows, Row::debit), MONTHS)),
        behind: |scope| scope.matching(|row| row.debit() > 0),
    },
    Attribute {
        name: "sum_deposits_90_days",
        description: "Sum of the credits of the last 90 days",
        value: |scope| Value::Money(sum(&scope.matching(|row| row.recent()), Row::credit)),
        behind: |scope| scope.matching(|row| row.recent() && row.credit() > 0),
    },
    Attribute {
        name: "sum_withdrawals_90_days",
        description: "Sum of the debits of the last 90 days",
        value: |scope| Value::Money(sum(&scope.matching(|row| row.recent()), Row::debit)),
        behind: |scope| scope.matching(|row| row.recent() && row.debit() > 0),
    },
    Attribute {
        name: "sum_employer_income",
        description: "Sum of payroll deposits",
        value: |scope| Value::Money(sum(&scope.matching(payroll), Row::credit)),
        behind: |scope| scope.matching(payroll),
    },
    Attribute {
        name: "count_employer_income",
        description: "Number of payroll deposits",
        value: |scope| count(scope.matching(payroll)),
        behind: |scope| scope.matching(payroll),
    },
    Attribute {
        name: "avg_employer_income",
        description: "Mean payroll deposit",
        value: |scope| {
            let rows = scope.matching(payroll);
            none_if_empty(&rows, || Value::Money(divide_rounded(sum(&rows, Row::credit), rows.len() as i64)))
        },
        behind: |scope| scope.matching(payroll),
    },
    Attribute {
        name: "count_employers",
        description: "Number of distinct employers paying payroll deposits",
        value: |scope| {
            let employers: HashSet<String> = scope
                .matching(payroll)
                .iter()
                .map(|row| row.transaction.description().to_text()[PAYROLL.len()..].to_owned())
                .collect();
            Value::Count(employers.len() as i64)
        },
        behind: |scope| scope.matching(payroll),
    },
    Attribute {
        name: "days_since_last_employer_income",
        description: "Days from the latest payroll deposit to the as-of date",
        value: |scope| match latest_payroll(scope) {
            Some(row) => Value::Count(i64::from(row.transaction.day)),
            None => Value::NoneDetected,
        },
        behind: |scope| latest_payroll(scope).into_iter().collect(),
    },
    Attribute {
        name: "sum_government_income",
        description: "Sum of government deposits (GOVT ...)",
        value: |scope| {
            let rows = scope.matching(government);
            none_if_empty(&rows, || Value::Money(sum(&rows, Row::credit)))
        },
        behind: |scope| scope.matching(government),
    },
    Attribute {
        name: "sum_loan_payments",
        description: "Sum of loan payments",
        value: |scope| Value::Money(sum(&scope.matching(loan_payment), Row::debit)),
        behind: |scope| scope.matching(loan_payment),
    },
    Attribute {
        name: "count_loan_payments",
        description: "Number of loan payments",
        value: |scope| count(scope.matching(loan_payment)),
        behind: |scope| scope.matching(loan_payment),
    },
    Attribute {
        name: "sum_credit_card_payments",
        description: "Sum of credit card payments",
        value: |scope| Value::Money(sum(&scope.matching(card_payment), Row::debit)),
        behind: |scope| scope.matching(card_payment),
    },
    Attribute {
        name: "sum_bill_payments",
        description: "Sum of bill payments",
        value: |scope| Value::Money(sum(&scope.matching(bill), Row::debit)),
        behind: |scope| scope.matching(bill),
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
