//! `POST /Investments`: the login's generated portfolio (interface-v3.md 2.7) behind the
//! pending phase.
//!
//! Amounts are kept in cents and converted once, so the totals add up exactly:
//! `MarketValue = Quantity × Price`, `AccountValue = Cash + Σ MarketValue`,
//! `Value = Σ AccountValue` and `Cash = Σ Cash`. Each account holds securities of its own
//! currency only, so `CurrencyValue` equals `AccountValue`.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde::{Serialize, Serializer};

use super::body::Body;
use super::generator::portfolio::{InvestmentAccount, Position, Security, Trade};
use super::generator::{dash_date, Cents, Guid, Isin, Portfolio, PRICE_DATE};
use super::keys;
use super::reply::{self, ApiError, LoginBody, LAST_REFRESH};
use super::state::Shared;
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
    let (login_id, username) = {
        let mut inner = shared.lock();
        let session = inner.data_session(request_id, login_id, shared.config.session_ttl)?;
        if let Some(wait) = session.pending(OPERATION, &shared.config, request_id, None) {
            return Ok(wait);
        }
        (session.login_id.clone().unwrap_or_default(), session.user.username)
    };
    let portfolio = shared.data.portfolio(&shared.config, &login_id);
    let body = InvestmentsBody {
        accounts: portfolio.accounts.iter().map(|account| AccountBody::new(account, &portfolio)).collect(),
        securities: Securities(&portfolio.securities),
        value: portfolio.value(),
        cash: portfolio.cash(),
        http_status_code: 200,
        login: LoginBody {
            username,
            is_scheduled_refresh: false,
            last_refresh: LAST_REFRESH,
            kind: None,
            id: &login_id,
        },
        institution: InstitutionBody { id: INSTITUTION_ID, name: INSTITUTION },
        request_id,
    };
    Ok(reply::json(StatusCode::OK, &body))
}

// ---- the wire shapes -----------------------------------------------------------------------

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct InvestmentsBody<'a> {
    accounts: Vec<AccountBody<'a>>,
    securities: Securities<'a>,
    value: Cents,
    cash: Cents,
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
struct AccountBody<'a> {
    id: Guid,
    full_account_id: String,
    account_id: &'a str,
    name: &'a str,
    #[serde(rename = "Type")]
    kind: &'static str,
    registered: bool,
    currency: &'static str,
    cash: Cents,
    account_value: Cents,
    currency_value: Cents,
    positions: Positions<'a>,
    transactions: Trades<'a>,
}

impl<'a> AccountBody<'a> {
    fn new(account: &'a InvestmentAccount, portfolio: &'a Portfolio) -> AccountBody<'a> {
        let value = account.value(&portfolio.securities);
        AccountBody {
            id: account.id,
            full_account_id: account.full_account_id(),
            account_id: &account.number,
            name: &account.name,
            kind: account.kind,
            registered: account.registered,
            currency: account.currency,
            cash: account.cash,
            account_value: value,
            currency_value: value,
            positions: Positions(&account.positions, &portfolio.securities),
            transactions: Trades(&account.transactions, &portfolio.securities),
        }
    }
}

/// Written row by row from the portfolio, without an intermediate Vec.
struct Positions<'a>(&'a [Position], &'a [Security]);

impl Serialize for Positions<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.iter().map(|position| {
            let security = &self.1[position.security];
            let market = position.market_value(self.1);
            let gain = Cents(market.0 - position.book_value.0);
            PositionBody {
                id: position.id,
                category: "Stocks",
                class: "equity",
                book_value: position.book_value,
                quantity: position.quantity as f64,
                market_value: market,
                gain_amount: gain,
                gain_currency_amount: gain,
                // A fraction rounded to 6 places (-0.08 is -8%).
                gain_percent: (gain.0 as f64 / position.book_value.0 as f64 * 1e6).round() / 1e6,
                currency: security.currency,
                security_id: security.id,
            }
        }))
    }
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct PositionBody {
    id: Guid,
    category: &'static str,
    class: &'static str,
    book_value: Cents,
    quantity: f64,
    market_value: Cents,
    gain_amount: Cents,
    gain_currency_amount: Cents,
    gain_percent: f64,
    currency: &'static str,
    security_id: Guid,
}

struct Trades<'a>(&'a [Trade], &'a [Security]);

impl Serialize for Trades<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.iter().map(|trade| {
            let security = &self.1[trade.security];
            let selling = trade.quantity < 0;
            TradeBody {
                id: trade.id,
                date: dash_date(trade.day),
                kind: if selling { "sell" } else { "buy" },
                description: TradeDescription {
                    verb: if selling { "Sold" } else { "Bought" },
                    quantity: trade.quantity.abs(),
                    symbol: security.symbol,
                    price: trade.price,
                },
                quantity: trade.quantity as f64,
                fee: trade.fee,
                amount: trade.amount(),
                security_id: security.id,
            }
        }))
    }
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct TradeBody {
    id: Guid,
    date: &'static str,
    #[serde(rename = "Type")]
    kind: &'static str,
    description: TradeDescription,
    quantity: f64,
    fee: Cents,
    amount: Cents,
    security_id: Guid,
}

/// `Bought 10 RY @ 131.25`, written without building a String per trade.
struct TradeDescription {
    verb: &'static str,
    quantity: i64,
    symbol: &'static str,
    price: Cents,
}

impl std::fmt::Display for TradeDescription {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {} {} @ {}.{:02}", self.verb, self.quantity, self.symbol, self.price.0 / 100, self.price.0 % 100)
    }
}

impl Serialize for TradeDescription {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

struct Securities<'a>(&'a [Security]);

impl Serialize for Securities<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.iter().map(|security| SecurityBody {
            id: security.id,
            name: security.name,
            symbol: security.symbol,
            kind: "equity",
            price: security.price,
            date: PRICE_DATE,
            aliases: security.aliases,
            currency: security.currency,
            cusip: security.cusip,
            isin: match security.isin {
                Isin::Absent => None,
                Isin::Null => Some(None),
                Isin::Value(isin) => Some(Some(isin)),
            },
        }))
    }
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct SecurityBody {
    id: Guid,
    name: &'static str,
    symbol: &'static str,
    #[serde(rename = "Type")]
    kind: &'static str,
    price: Cents,
    date: &'static str,
    aliases: &'static [&'static str],
    currency: &'static str,
    #[serde(rename = "CUSIP", skip_serializing_if = "Option::is_none")]
    cusip: Option<&'static str>,
    /// Absent (outer None), null (inner None) or a value: all three happen on the wire.
    #[serde(rename = "ISIN", skip_serializing_if = "Option::is_none")]
    isin: Option<Option<&'static str>>,
}
