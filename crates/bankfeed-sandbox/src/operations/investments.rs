//! `POST /Investments`: the login's generated portfolio (docs/protocol.md#investments) behind
//! the pending phase.
//!
//! Amounts are kept in cents and converted once, so the totals add up exactly:
//! `MarketValue = Quantity × Price`, `AccountValue = Cash + Σ MarketValue`,
//! `Value = Σ AccountValue` and `Cash = Σ Cash`. Each account holds securities of its own
//! currency only, so `CurrencyValue` equals `AccountValue`.

use axum::body::Bytes;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::{Serialize, Serializer};

use crate::generator::portfolio::{InvestmentAccount, Position, Security, Trade};
use crate::generator::{dash_date, AsOf, Cents, Guid, Isin, Portfolio};
use crate::operations::operation::{DataOperation, Ready};
use crate::server::body::Body;
use crate::server::reply::{Envelope, ErrorReply, InstitutionFields};
use crate::world::state::Shared;
use bankfeed::protocol::{self, WireOp};

/// `Investments`: one POST, repeated as it is while pending (no `...Async` link).
pub(crate) struct Investments;

impl DataOperation for Investments {
    const WIRE: &'static WireOp = &protocol::INVESTMENTS;
    type Options = ();

    fn options(body: &Body) -> Result<(), ErrorReply> {
        body.flag("MostRecentCached")?;
        Ok(())
    }

    fn answer(shared: &Shared, ready: &Ready, (): ()) -> Response {
        let cached = shared.data.portfolio(&shared.config, &ready.login_id, shared.clock());
        // The login's id and username are in the answer too; they are the same for every
        // session of the LoginId the cache is keyed by.
        match cached.answer.get_or_init(|| template(&cached.portfolio, ready)) {
            Some(prefix) => with_request_id(prefix, &ready.request_id),
            None => envelope(&cached.portfolio, ready, &ready.request_id).ok(),
        }
    }
}

/// Stands for the RequestId in a cached answer.
const PLACEHOLDER: &str = "00000000-0000-0000-0000-000000000000";

fn envelope<'a>(portfolio: &'a Portfolio, ready: &'a Ready, request_id: &'a str) -> Envelope<'a, InvestmentsBody<'a>> {
    let body = InvestmentsBody {
        accounts: portfolio.accounts.iter().map(|account| AccountBody::new(account, portfolio)).collect(),
        securities: Securities(&portfolio.securities, &portfolio.price_date),
        value: portfolio.value(),
        cash: portfolio.cash(),
    };
    Envelope::new(body, Some(InstitutionFields::INVESTMENTS), Some(ready.login(None)), request_id)
}

/// The answer's bytes up to the RequestId's value, which the envelope writes last; None if it
/// does not end so (then every answer is serialised whole).
fn template(portfolio: &Portfolio, ready: &Ready) -> Option<Bytes> {
    let bytes = serde_json::to_vec(&envelope(portfolio, ready, PLACEHOLDER)).ok()?;
    let suffix = format!("\"{PLACEHOLDER}\"}}");
    let prefix = bytes.strip_suffix(suffix.as_bytes())?;
    Some(Bytes::copy_from_slice(prefix))
}

/// The cached answer with `request_id` in place, as `reply::json` would have written it.
fn with_request_id(prefix: &Bytes, request_id: &str) -> Response {
    let mut bytes = Vec::with_capacity(prefix.len() + request_id.len() + 3);
    bytes.extend_from_slice(prefix);
    // Writing a str into a Vec cannot fail.
    let _ = serde_json::to_writer(&mut bytes, request_id);
    bytes.push(b'}');
    let content_type = [(header::CONTENT_TYPE, HeaderValue::from_static("application/json"))];
    (StatusCode::OK, content_type, bytes).into_response()
}

// ---- the wire shapes -----------------------------------------------------------------------

/// Inside the [`Envelope`].
#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct InvestmentsBody<'a> {
    accounts: Vec<AccountBody<'a>>,
    securities: Securities<'a>,
    value: Cents,
    cash: Cents,
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
            transactions: Trades(&account.transactions, &portfolio.securities, portfolio.clock),
        }
    }
}

/// Written row by row from the portfolio, without an intermediate Vec.
struct Positions<'a>(&'a [Position], &'a [Security]);

impl Serialize for Positions<'_> {
    #[expect(
        clippy::indexing_slicing,
        reason = "positions and trades only point into their own portfolio's securities"
    )]
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

/// The trades, the securities they name, and the clock their days count back from.
struct Trades<'a>(&'a [Trade], &'a [Security], AsOf);

impl Serialize for Trades<'_> {
    #[expect(
        clippy::indexing_slicing,
        reason = "positions and trades only point into their own portfolio's securities"
    )]
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.iter().map(|trade| {
            let security = &self.1[trade.security];
            let selling = trade.quantity < 0;
            TradeBody {
                id: trade.id,
                date: dash_date(self.2, trade.day),
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

/// The securities and when their prices were taken.
struct Securities<'a>(&'a [Security], &'a str);

impl Serialize for Securities<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.iter().map(|security| SecurityBody {
            id: security.id,
            name: security.name,
            symbol: security.symbol,
            kind: "equity",
            price: security.price,
            date: self.1,
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
struct SecurityBody<'a> {
    id: Guid,
    name: &'static str,
    symbol: &'static str,
    #[serde(rename = "Type")]
    kind: &'static str,
    price: Cents,
    date: &'a str,
    aliases: &'static [&'static str],
    currency: &'static str,
    #[serde(rename = "CUSIP", skip_serializing_if = "Option::is_none")]
    cusip: Option<&'static str>,
    /// Absent (outer None), null (inner None) or a value: all three happen on the wire.
    #[serde(rename = "ISIN", skip_serializing_if = "Option::is_none")]
    #[expect(clippy::option_option, reason = "absent, null and a value: three shapes the service sends")]
    isin: Option<Option<&'static str>>,
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use super::*;
    use crate::generator::DataCache;
    use crate::SandboxConfig;

    #[tokio::test]
    async fn the_cached_answer_is_the_serialised_one_with_its_request_id() {
        let login_id = crate::login_id(0, "bulk_00003");
        let cached = DataCache::default().portfolio(&SandboxConfig::default(), &login_id, AsOf::default());
        let ready = Ready {
            request_id: String::new(),
            login_id,
            username: Cow::Borrowed("bulk_00003"),
            last_refresh: String::new(),
            tag: None,
            scheduled_refresh: false,
        };
        let prefix = template(&cached.portfolio, &ready).expect("the envelope ends with the RequestId");
        for request_id in ["0b4bd2a5-3a5f-4c3e-9d0e-0d3b6cfa6f57", "odd \"id\" \\ \u{e9}"] {
            let response = with_request_id(&prefix, request_id);
            assert_eq!(response.headers()[header::CONTENT_TYPE], "application/json");
            let body = axum::body::to_bytes(response.into_body(), usize::MAX).await.unwrap();
            let fresh = serde_json::to_vec(&envelope(&cached.portfolio, &ready, request_id)).unwrap();
            assert_eq!(body, fresh);
        }
    }
}
