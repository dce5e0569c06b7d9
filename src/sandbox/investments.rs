//! `POST /Investments`: the login's generated portfolio (docs/protocol.md#investments) behind
//! the pending phase.
//!
//! Amounts are kept in cents and converted once, so the totals add up exactly:
//! `MarketValue = Quantity × Price`, `AccountValue = Cash + Σ MarketValue`,
//! `Value = Σ AccountValue` and `Cash = Σ Cash`. Each account holds securities of its own
//! currency only, so `CurrencyValue` equals `AccountValue`.

use axum::response::Response;
use serde::{Serialize, Serializer};

use super::body::Body;
use super::generator::portfolio::{InvestmentAccount, Position, Security, Trade};
use super::generator::{dash_date, Cents, Guid, Isin, Portfolio, PRICE_DATE};
use super::operation::{DataOperation, Operation, Ready};
use super::reply::{Envelope, ErrorReply, InstitutionFields};
use super::state::Shared;

/// `Investments`: one POST, repeated as it is while pending (no `...Async` link).
pub(crate) struct Investments;

impl DataOperation for Investments {
    const OPERATION: Operation =
        Operation { name: "Investments", path: "Investments", async_rel: None, names_login: true, after_detail: false };
    type Options = ();

    fn options(body: &Body) -> Result<(), ErrorReply> {
        body.flag("MostRecentCached")?;
        Ok(())
    }

    fn answer(shared: &Shared, ready: &Ready, (): ()) -> Response {
        let portfolio = shared.data.portfolio(&shared.config, &ready.login_id);
        let body = InvestmentsBody {
            accounts: portfolio.accounts.iter().map(|account| AccountBody::new(account, &portfolio)).collect(),
            securities: Securities(&portfolio.securities),
            value: portfolio.value(),
            cash: portfolio.cash(),
        };
        Envelope::new(body, Some(InstitutionFields::INVESTMENTS), ready.login(None), &ready.request_id).ok()
    }
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
            transactions: Trades(&account.transactions, &portfolio.securities),
        }
    }
}

/// Written row by row from the portfolio, without an intermediate Vec.
struct Positions<'a>(&'a [Position], &'a [Security]);

impl Serialize for Positions<'_> {
    #[allow(clippy::indexing_slicing, reason = "positions and trades only point into their own portfolio's securities")]
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
    #[allow(clippy::indexing_slicing, reason = "positions and trades only point into their own portfolio's securities")]
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
