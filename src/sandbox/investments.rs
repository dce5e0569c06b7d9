//! `POST /Investments`: a small fixed portfolio (interface-v3.md 2.7) behind the pending phase.
//!
//! Amounts are kept in cents and converted once, so the totals add up exactly:
//! `MarketValue = Quantity × Price`, `AccountValue = Cash + Σ MarketValue`,
//! `Value = Σ AccountValue` and `Cash = Σ Cash`, all in CAD.

// Amounts are written in cents with the cents as their own group: 1_250_75 is $1,250.75.
#![allow(clippy::inconsistent_digit_grouping)]

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde::Serialize;

use super::body::Body;
use super::keys;
use super::reply::{self, ApiError, LoginBody, LAST_REFRESH};
use super::state::{Session, Shared};
use super::users::{INSTITUTION, INSTITUTION_ID};

/// The operation's name in the per-session pending map.
const OPERATION: &str = "Investments";

pub(crate) async fn investments(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    bytes: Bytes,
) -> Result<Response, ApiError> {
    keys::check_api_key(&shared, &headers)?;
    let body = Body::parse(&bytes)?;
    let request_id = body.required("RequestId")?;
    let login_id = body.required("LoginId")?;
    body.flag("MostRecentCached")?;
    let mut inner = shared.lock();
    let session = inner.data_session(request_id, login_id, shared.config.session_ttl)?;
    Ok(
        session.pending_or(OPERATION, &shared.config, request_id, |session| {
            ready(session, request_id)
        }),
    )
}

fn ready(session: &Session, request_id: &str) -> Response {
    let accounts: Vec<Account> = PORTFOLIO.iter().map(Account::from).collect();
    let cash = PORTFOLIO.iter().map(|account| account.cash).sum();
    let value = PORTFOLIO.iter().map(PortfolioAccount::value).sum();
    let body = InvestmentsBody {
        accounts,
        securities: SECURITIES.iter().map(Security::from).collect(),
        value: dollars(value),
        cash: dollars(cash),
        http_status_code: 200,
        login: LoginBody {
            username: session.user.username,
            is_scheduled_refresh: false,
            last_refresh: LAST_REFRESH,
            kind: None,
            id: session.login_id.as_deref().unwrap_or_default(),
        },
        institution: InstitutionBody {
            id: INSTITUTION_ID,
            name: INSTITUTION,
        },
        request_id,
    };
    reply::json(StatusCode::OK, &body)
}

fn dollars(cents: i64) -> f64 {
    cents as f64 / 100.0
}

// ---- the fixed portfolio -------------------------------------------------------------------

struct SecurityData {
    id: &'static str,
    name: &'static str,
    symbol: &'static str,
    price: i64,
    aliases: &'static [&'static str],
    cusip: Option<&'static str>,
    isin: Option<&'static str>,
}

const ROYAL_BANK: &str = "5b0e4b8a-6c1f-4e8e-9d57-2f1a3c7d9e01";
const SHOPIFY: &str = "a3f9c2d4-8b71-4f0a-b6e2-7c5d1e9f3a02";
const ENBRIDGE: &str = "c7d2e5f8-1a34-4b6c-8d9e-0f2a4b6c8d03";

/// Shopify has no CUSIP and Enbridge a null ISIN: the shapes 2.7 says happen.
const SECURITIES: [SecurityData; 3] = [
    SecurityData {
        id: ROYAL_BANK,
        name: "Royal Bank of Canada",
        symbol: "RY",
        price: 131_25,
        aliases: &["RY.TO", "RY"],
        cusip: Some("780087102"),
        isin: Some("CA7800871021"),
    },
    SecurityData {
        id: SHOPIFY,
        name: "Shopify Inc.",
        symbol: "SHOP",
        price: 98_40,
        aliases: &["SHOP.TO"],
        cusip: None,
        isin: Some("CA82509L1076"),
    },
    SecurityData {
        id: ENBRIDGE,
        name: "Enbridge Inc.",
        symbol: "ENB",
        price: 52_10,
        aliases: &["ENB.TO", "ENB"],
        cusip: Some("29250N105"),
        isin: None,
    },
];

const PRICE_DATE: &str = "2026-11-19T21:00:00.0000000Z";

struct PositionData {
    id: &'static str,
    security: usize,
    quantity: i64,
    book_value: i64,
}

struct TransactionData {
    id: &'static str,
    date: &'static str,
    security: usize,
    /// Negative for a sale.
    quantity: i64,
    price: i64,
    fee: i64,
}

struct PortfolioAccount {
    id: &'static str,
    account_id: &'static str,
    name: &'static str,
    registered: bool,
    cash: i64,
    positions: &'static [PositionData],
    transactions: &'static [TransactionData],
}

impl PortfolioAccount {
    fn value(&self) -> i64 {
        self.cash
            + self
                .positions
                .iter()
                .map(PositionData::market_value)
                .sum::<i64>()
    }
}

impl PositionData {
    fn market_value(&self) -> i64 {
        self.quantity * SECURITIES[self.security].price
    }
}

const FEE: i64 = 9_99;

/// Transactions explain the positions: bought 50 SHOP, sold 10, hold 40 at a book value of 40 × 107.
const PORTFOLIO: [PortfolioAccount; 2] = [
    PortfolioAccount {
        id: "e1a2b3c4-d5e6-4f70-8a9b-0c1d2e3f4a10",
        account_id: "40012345",
        name: "TFSA",
        registered: true,
        cash: 1_250_75,
        positions: &[
            PositionData {
                id: "f0e1d2c3-b4a5-4968-8776-655443322101",
                security: 0,
                quantity: 50,
                book_value: 6_000_00,
            },
            PositionData {
                id: "f0e1d2c3-b4a5-4968-8776-655443322102",
                security: 1,
                quantity: 40,
                book_value: 4_280_00,
            },
        ],
        transactions: &[
            TransactionData {
                id: "0a1b2c3d-4e5f-4a6b-8c7d-8e9f0a1b2c01",
                date: "2026-03-02",
                security: 0,
                quantity: 50,
                price: 120_00,
                fee: FEE,
            },
            TransactionData {
                id: "0a1b2c3d-4e5f-4a6b-8c7d-8e9f0a1b2c02",
                date: "2026-04-15",
                security: 1,
                quantity: 50,
                price: 107_00,
                fee: FEE,
            },
            TransactionData {
                id: "0a1b2c3d-4e5f-4a6b-8c7d-8e9f0a1b2c03",
                date: "2026-09-08",
                security: 1,
                quantity: -10,
                price: 105_00,
                fee: FEE,
            },
        ],
    },
    PortfolioAccount {
        id: "e1a2b3c4-d5e6-4f70-8a9b-0c1d2e3f4a20",
        account_id: "40067890",
        name: "Non-registered",
        registered: false,
        cash: 320_40,
        positions: &[PositionData {
            id: "f0e1d2c3-b4a5-4968-8776-655443322103",
            security: 2,
            quantity: 100,
            book_value: 4_800_00,
        }],
        transactions: &[TransactionData {
            id: "0a1b2c3d-4e5f-4a6b-8c7d-8e9f0a1b2c04",
            date: "2026-05-20",
            security: 2,
            quantity: 100,
            price: 48_00,
            fee: FEE,
        }],
    },
];

// ---- the wire shapes -----------------------------------------------------------------------

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct InvestmentsBody<'a> {
    accounts: Vec<Account>,
    securities: Vec<Security>,
    value: f64,
    cash: f64,
    http_status_code: u16,
    login: LoginBody<'a>,
    institution: InstitutionBody,
    request_id: &'a str,
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct InstitutionBody {
    id: u32,
    name: &'static str,
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct Account {
    id: &'static str,
    full_account_id: String,
    account_id: &'static str,
    name: &'static str,
    #[serde(rename = "Type")]
    kind: &'static str,
    registered: bool,
    currency: &'static str,
    cash: f64,
    account_value: f64,
    currency_value: f64,
    positions: Vec<Position>,
    transactions: Vec<Transaction>,
}

impl From<&PortfolioAccount> for Account {
    fn from(account: &PortfolioAccount) -> Account {
        let registration = if account.registered {
            "Registered"
        } else {
            "NonRegistered"
        };
        Account {
            id: account.id,
            full_account_id: format!("{registration}:{}-cash-CAD", account.account_id),
            account_id: account.account_id,
            name: account.name,
            kind: "cash",
            registered: account.registered,
            currency: "CAD",
            cash: dollars(account.cash),
            account_value: dollars(account.value()),
            // Every account is in CAD, so its value in the customer's currency is the same.
            currency_value: dollars(account.value()),
            positions: account.positions.iter().map(Position::from).collect(),
            transactions: account.transactions.iter().map(Transaction::from).collect(),
        }
    }
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct Position {
    id: &'static str,
    category: &'static str,
    class: &'static str,
    book_value: f64,
    quantity: f64,
    market_value: f64,
    gain_amount: f64,
    gain_currency_amount: f64,
    gain_percent: f64,
    currency: &'static str,
    security_id: &'static str,
}

impl From<&PositionData> for Position {
    fn from(position: &PositionData) -> Position {
        let gain = position.market_value() - position.book_value;
        // A fraction rounded to 4 places, as the service shows it (-0.08 is -8%).
        let percent = (gain as f64 / position.book_value as f64 * 10_000.0).round() / 10_000.0;
        Position {
            id: position.id,
            category: "Stocks",
            class: "equity",
            book_value: dollars(position.book_value),
            quantity: position.quantity as f64,
            market_value: dollars(position.market_value()),
            gain_amount: dollars(gain),
            gain_currency_amount: dollars(gain),
            gain_percent: percent,
            currency: "CAD",
            security_id: SECURITIES[position.security].id,
        }
    }
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct Transaction {
    id: &'static str,
    date: &'static str,
    #[serde(rename = "Type")]
    kind: &'static str,
    description: String,
    quantity: f64,
    fee: f64,
    amount: f64,
    security_id: &'static str,
}

impl From<&TransactionData> for Transaction {
    fn from(transaction: &TransactionData) -> Transaction {
        let security = &SECURITIES[transaction.security];
        let selling = transaction.quantity < 0;
        // Money leaves the account on a buy (negative) and comes in on a sale, net of the fee.
        let amount = -transaction.quantity * transaction.price - transaction.fee;
        let verb = if selling { "Sold" } else { "Bought" };
        Transaction {
            id: transaction.id,
            date: transaction.date,
            kind: if selling { "sell" } else { "buy" },
            description: format!(
                "{verb} {} {} @ {:.2}",
                transaction.quantity.abs(),
                security.symbol,
                dollars(transaction.price)
            ),
            quantity: transaction.quantity as f64,
            fee: dollars(transaction.fee),
            amount: dollars(amount),
            security_id: security.id,
        }
    }
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct Security {
    id: &'static str,
    name: &'static str,
    symbol: &'static str,
    #[serde(rename = "Type")]
    kind: &'static str,
    price: f64,
    date: &'static str,
    aliases: &'static [&'static str],
    currency: &'static str,
    #[serde(rename = "CUSIP", skip_serializing_if = "Option::is_none")]
    cusip: Option<&'static str>,
    /// Serialized even when None: the service sends `"ISIN": null`.
    #[serde(rename = "ISIN")]
    isin: Option<&'static str>,
}

impl From<&SecurityData> for Security {
    fn from(security: &SecurityData) -> Security {
        Security {
            id: security.id,
            name: security.name,
            symbol: security.symbol,
            kind: "equity",
            price: dollars(security.price),
            date: PRICE_DATE,
            aliases: security.aliases,
            currency: "CAD",
            cusip: security.cusip,
            isin: security.isin,
        }
    }
}
