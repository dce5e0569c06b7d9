//! Investments as tables: accounts, positions and transactions (each with its account and its
//! security joined), and securities.

use super::money::{cell, Amount, Unfit};
use super::{build, Read, Table, Text};
use crate::data::investments::{InvestmentAccount, InvestmentTransaction, Investments, Position, Security};
use crate::data::login::NamesLogin;
use crate::data::money::{JsonNumber, MoneyType, Written, AMOUNT, PRICE, QUANTITY};

/// Securities by Id, for the joins: sorted, and searched by halves. A payload lists tens of
/// securities, found in a few comparisons each; a hash map spent more hashing every row's Id than
/// the search does (BENCHMARKS.md, sessions).
struct SecuritiesById<'a, S, N>(Vec<(&'a str, &'a Security<S, N>)>);

impl<'a, S: Text, N> SecuritiesById<'a, S, N> {
    fn new(investments: &'a Investments<S, N>) -> Self {
        let mut securities: Vec<_> =
            investments.securities.iter().filter_map(|s| Some((s.id.as_deref()?, s))).collect();
        // Stable: of securities listed twice under one Id, the last stays last.
        securities.sort_by(|a, b| a.0.cmp(b.0));
        SecuritiesById(securities)
    }

    /// The security listed under `id`; the last listed when there are several.
    fn get(&self, id: &str) -> Option<&'a Security<S, N>> {
        let after = self.0.partition_point(|(listed, _)| *listed <= id);
        let (listed, security) = self.0.get(after.checked_sub(1)?)?;
        (*listed == id).then_some(*security)
    }
}

pub fn investment_accounts_table<S: Text, N: Amount>(investments: &Investments<S, N>) -> Result<Table, Unfit> {
    let rows: Vec<&InvestmentAccount<S, N>> = investments.accounts.iter().collect();
    build(
        &rows,
        &[
            ("account_id", Read::Text(|a| a.id.as_deref())),
            ("full_account_id", Read::Text(|a| a.full_account_id.as_deref())),
            ("account_number", Read::Text(|a| a.account_id.as_deref())),
            ("account_name", Read::Text(|a| a.name.as_deref())),
            ("type", Read::Text(|a| a.kind.as_deref())),
            ("registered", Read::Bool(|a| a.registered)),
            ("currency", Read::Text(|a| a.currency.as_deref())),
            ("cash", Read::Money(N::decimal(AMOUNT), |a| cell(a.cash.as_ref()))),
            ("account_value", Read::Money(N::decimal(AMOUNT), |a| cell(a.account_value.as_ref()))),
            ("currency_value", Read::Money(N::decimal(AMOUNT), |a| cell(a.currency_value.as_ref()))),
        ],
    )
}

/// An item of an account (a position or a transaction) with its account and its security.
struct Joined<'a, S, N, T> {
    account: &'a InvestmentAccount<S, N>,
    item: &'a T,
    security: Option<&'a Security<S, N>>,
}

/// Every item of every account, in order, joined to its account and to its security by Id. An
/// item whose security is not listed keeps its row, with no security.
fn joined<S: Text, N, T>(
    investments: &Investments<S, N>,
    items: fn(&InvestmentAccount<S, N>) -> &[T],
    security_id: fn(&T) -> Option<&str>,
) -> Vec<Joined<'_, S, N, T>> {
    let securities = SecuritiesById::new(investments);
    investments
        .accounts
        .iter()
        .flat_map(|account| items(account).iter().map(move |item| (account, item)))
        .map(|(account, item)| Joined { account, item, security: security_id(item).and_then(|id| securities.get(id)) })
        .collect()
}

pub fn positions_table<S: Text, N: Amount>(investments: &Investments<S, N>) -> Result<Table, Unfit> {
    let rows = joined(investments, |a| &a.positions, |p: &Position<S, N>| p.security_id.as_deref());
    build(
        &rows,
        &[
            ("account_id", Read::Text(|r| r.account.id.as_deref())),
            ("account_number", Read::Text(|r| r.account.account_id.as_deref())),
            ("account_name", Read::Text(|r| r.account.name.as_deref())),
            ("account_type", Read::Text(|r| r.account.kind.as_deref())),
            ("position_id", Read::Text(|r| r.item.id.as_deref())),
            ("security_id", Read::Text(|r| r.item.security_id.as_deref())),
            ("symbol", Read::Text(|r| r.security.and_then(|s| s.symbol.as_deref()))),
            ("security_name", Read::Text(|r| r.security.and_then(|s| s.name.as_deref()))),
            ("category", Read::Text(|r| r.item.category.as_deref())),
            ("class", Read::Text(|r| r.item.class.as_deref())),
            ("quantity", Read::Money(N::decimal(QUANTITY), |r| cell(r.item.quantity.as_ref()))),
            ("price", Read::Money(N::decimal(PRICE), |r| r.security.and_then(|s| cell(s.price.as_ref())))),
            ("book_value", Read::Money(N::decimal(AMOUNT), |r| cell(r.item.book_value.as_ref()))),
            ("market_value", Read::Money(N::decimal(AMOUNT), |r| cell(r.item.market_value.as_ref()))),
            ("gain_amount", Read::Money(N::decimal(AMOUNT), |r| cell(r.item.gain_amount.as_ref()))),
            ("gain_currency_amount", Read::Money(N::decimal(AMOUNT), |r| cell(r.item.gain_currency_amount.as_ref()))),
            ("gain_percent", Read::Float(|r| r.item.gain_percent)),
            ("currency", Read::Text(|r| r.item.currency.as_deref())),
        ],
    )
}

pub fn investment_transactions_table<S: Text, N: Amount>(investments: &Investments<S, N>) -> Result<Table, Unfit> {
    let rows = joined(investments, |a| &a.transactions, |t: &InvestmentTransaction<S, N>| t.security_id.as_deref());
    build(
        &rows,
        &[
            ("account_id", Read::Text(|r| r.account.id.as_deref())),
            ("account_number", Read::Text(|r| r.account.account_id.as_deref())),
            ("account_name", Read::Text(|r| r.account.name.as_deref())),
            ("account_type", Read::Text(|r| r.account.kind.as_deref())),
            ("account_currency", Read::Text(|r| r.account.currency.as_deref())),
            ("transaction_id", Read::Text(|r| r.item.id.as_deref())),
            ("date", Read::Date(|r| r.item.date.as_deref())),
            ("type", Read::Text(|r| r.item.kind.as_deref())),
            ("description", Read::Text(|r| r.item.description.as_deref())),
            ("security_id", Read::Text(|r| r.item.security_id.as_deref())),
            ("symbol", Read::Text(|r| r.security.and_then(|s| s.symbol.as_deref()))),
            ("security_name", Read::Text(|r| r.security.and_then(|s| s.name.as_deref()))),
            ("quantity", Read::Money(N::decimal(QUANTITY), |r| cell(r.item.quantity.as_ref()))),
            ("fee", Read::Money(N::decimal(AMOUNT), |r| cell(r.item.fee.as_ref()))),
            ("amount", Read::Money(N::decimal(AMOUNT), |r| cell(r.item.amount.as_ref()))),
        ],
    )
}

pub fn securities_table<S: Text, N: Amount>(investments: &Investments<S, N>) -> Result<Table, Unfit> {
    let rows: Vec<&Security<S, N>> = investments.securities.iter().collect();
    build(
        &rows,
        &[
            ("security_id", Read::Text(|s| s.id.as_deref())),
            ("symbol", Read::Text(|s| s.symbol.as_deref())),
            ("name", Read::Text(|s| s.name.as_deref())),
            ("type", Read::Text(|s| s.kind.as_deref())),
            ("price", Read::Money(N::decimal(PRICE), |s| cell(s.price.as_ref()))),
            ("date", Read::Timestamp(|s| s.date.as_deref())),
            ("currency", Read::Text(|s| s.currency.as_deref())),
            ("cusip", Read::Text(|s| s.cusip.as_deref())),
            ("isin", Read::Text(|s| s.isin.as_deref())),
            ("aliases", Read::TextList(|s| s.aliases.iter().map(|alias| &**alias).collect())),
        ],
    )
}

/// Every table of an Investments payload, with its totals.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct InvestmentsTables {
    /// `Value`: the total value of the accounts.
    pub value: Option<f64>,
    /// `Cash`: the total cash of the accounts.
    pub cash: Option<f64>,
    pub request_id: Option<String>,
    /// `Login.Id`: the login the data belongs to.
    pub login_id: Option<String>,
    pub accounts: Table,
    pub positions: Table,
    pub transactions: Table,
    pub securities: Table,
    /// How the tables hold money (docs/tables.md#money).
    pub money: MoneyType,
}

impl InvestmentsTables {
    /// The tables of `investments`; a decimal money value that does not fit its column is the
    /// payload's error, naming the column (docs/tables.md#money).
    pub fn new<S: Text, N: Amount>(investments: &Investments<S, N>) -> Result<Self, crate::Error> {
        let unfit = |table: &'static str| move |unfit: Unfit| super::unfit_error("Investments", table, &unfit);
        Ok(InvestmentsTables {
            value: investments.value,
            cash: investments.cash,
            request_id: investments.request_id.as_deref().map(str::to_owned),
            login_id: investments.login_id().map(str::to_owned),
            accounts: investment_accounts_table(investments).map_err(unfit("accounts"))?,
            positions: positions_table(investments).map_err(unfit("positions"))?,
            transactions: investment_transactions_table(investments).map_err(unfit("transactions"))?,
            securities: securities_table(investments).map_err(unfit("securities"))?,
            money: super::money::money_type::<N>(),
        })
    }

    /// Reads a payload straight into its tables, money as floats.
    pub fn from_json(json: &[u8]) -> Result<Self, crate::Error> {
        Self::read(json, MoneyType::Float)
    }

    /// Reads a payload straight into its tables, money as `money` says. The model borrows its
    /// text (and its money's digits) from `json` and lives only while the tables are built: one
    /// pass, and no allocation per string.
    pub fn read(json: &[u8], money: MoneyType) -> Result<Self, crate::Error> {
        fn tables<'a, N: Amount + JsonNumber<'a> + Default>(json: &'a [u8]) -> Result<InvestmentsTables, crate::Error> {
            let investments: Investments<std::borrow::Cow<'a, str>, N> =
                crate::data::json::decode_payload("Investments", 200, json)?;
            InvestmentsTables::new(&investments)
        }
        match money {
            MoneyType::Float => tables::<f64>(json),
            MoneyType::Decimal => tables::<Written>(json),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::institution::Institution;
    use crate::tables::ColumnData;
    use arrow_array::cast::AsArray;
    use arrow_array::Array;
    use serde_json::json;

    fn sample() -> Investments {
        serde_json::from_value(json!({
            "Accounts": [{"Id": "a1", "AccountId": "123", "Name": "TFSA", "Type": "tfsa", "Registered": true, "Currency": "CAD",
                "Cash": 10.0, "AccountValue": 110.0,
                "Positions": [{"Id": "p1", "SecurityId": "s1", "Quantity": 2, "MarketValue": 100.0, "BookValue": 90.0}],
                "Transactions": [{"Id": "t1", "Date": "2026-01-02", "Type": "buy", "SecurityId": "s1", "Quantity": 2, "Fee": 1, "Amount": -91},
                                 {"Id": "t2", "Date": "2026-01-03", "Type": "sell", "SecurityId": "missing", "Quantity": -1, "Fee": 0, "Amount": 45}]},
                {"Id": "a2", "Positions": null, "Transactions": null}],
            "Securities": [{"Id": "s1", "Symbol": "XYZ", "Name": "XYZ Corp", "Price": 50, "Date": "2026-11-20T21:00:00.0000000Z", "Aliases": ["XYZ.TO"]}],
            "Value": 110.0, "Cash": 10.0
        }))
        .unwrap()
    }

    #[test]
    fn positions_join_their_account_and_security() {
        let table = positions_table(&sample()).unwrap();
        assert_eq!(table.rows, 1);
        assert_eq!(table.column("symbol"), Some(&ColumnData::Text(vec![Some("XYZ")].into())));
        assert_eq!(table.column("account_number"), Some(&ColumnData::Text(vec![Some("123")].into())));
        assert_eq!(table.column("price"), Some(&ColumnData::Float(vec![Some(50.0)].into())));
    }

    #[test]
    fn transactions_keep_rows_whose_security_is_unknown() {
        let table = investment_transactions_table(&sample()).unwrap();
        assert_eq!(table.rows, 2);
        assert_eq!(table.column("symbol"), Some(&ColumnData::Text(vec![Some("XYZ"), None].into())));
        assert_eq!(table.column("amount"), Some(&ColumnData::Float(vec![Some(-91.0), Some(45.0)].into())));
        match table.column("date") {
            Some(ColumnData::Date(days)) => assert_eq!(days.value(1) - days.value(0), 1),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn items_join_the_security_listed_last_under_their_id() {
        let mut investments = sample();
        let listed_again = Security { id: Some("s1".into()), symbol: Some("XYZ.U".into()), ..Security::default() };
        let other = Security { id: Some("s0".into()), symbol: Some("ABC".into()), ..Security::default() };
        investments.securities.insert(0, other);
        investments.securities.push(listed_again);
        let table = investment_transactions_table(&investments).unwrap();
        assert_eq!(table.column("symbol"), Some(&ColumnData::Text(vec![Some("XYZ.U"), None].into())));
        investments.securities.truncate(1);
        let table = positions_table(&investments).unwrap();
        assert_eq!(table.column("symbol"), Some(&ColumnData::Text(vec![None::<&str>].into())));
    }

    #[test]
    fn null_lists_are_empty_accounts() {
        let accounts = investment_accounts_table(&sample()).unwrap();
        assert_eq!(accounts.rows, 2);
        assert_eq!(accounts.column("account_id"), Some(&ColumnData::Text(vec![Some("a1"), Some("a2")].into())));
        assert_eq!(positions_table(&sample()).unwrap().rows, 1);
        match securities_table(&sample()).unwrap().column("aliases") {
            Some(ColumnData::TextList(aliases)) => assert_eq!(aliases.value(0).as_string::<i32>().value(0), "XYZ.TO"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn borrowed_and_owned_reads_give_the_same_tables() {
        // Escaped strings cannot be borrowed; they are read into owned text instead.
        let json = br#"{
            "Accounts": [{"Id": "a1", "Name": "caf\u00e9", "Transactions": [{"Id": "t1", "Date": "2026-01-02", "Description": "x\"y"}]}],
            "Securities": [{"Id": "s1", "Aliases": ["A", 1, "B"]}]
        }"#;
        let owned: Investments = serde_json::from_slice(json).unwrap();
        let borrowed = InvestmentsTables::from_json(json).unwrap();
        assert_eq!(InvestmentsTables::new(&owned).unwrap(), borrowed);
        assert_eq!(borrowed.transactions.column("description"), Some(&ColumnData::Text(vec![Some("x\"y")].into())));
        assert_eq!(borrowed.accounts.column("account_name"), Some(&ColumnData::Text(vec![Some("café")].into())));
        assert!(matches!(InvestmentsTables::from_json(b"[1, 2"), Err(crate::Error::Decode { .. })));
    }

    #[test]
    fn a_saved_answer_that_is_not_a_payload_is_not_an_empty_result() {
        for body in [&b"{}"[..], b"[]", b"null", br#"{"RequestId": "r", "Login": {"Id": "l"}}"#] {
            assert!(matches!(InvestmentsTables::from_json(body), Err(crate::Error::Protocol { .. })), "{body:?}");
        }
        let envelope = br#"{"HttpStatusCode": 500, "FlinksCode": "AGGREGATION_ERROR"}"#;
        assert!(matches!(InvestmentsTables::from_json(envelope), Err(crate::Error::Api(_))));
        assert_eq!(InvestmentsTables::from_json(br#"{"Accounts": []}"#).unwrap().accounts.rows, 0);
    }

    #[test]
    fn the_public_references_shape_gives_the_interfaces_tables() {
        // The reference nests the accounts in `Institution`, writes its `Id` as text and the
        // currencies in lower case (docs/protocol.md#investments).
        let interface = sample();
        let mut reference = json!({
            "Accounts": [{"Id": "a1", "AccountId": "123", "Name": "TFSA", "Type": "tfsa", "Registered": true, "Currency": "cad",
                "Cash": 10.0, "AccountValue": 110.0,
                "Positions": [{"Id": "p1", "SecurityId": "s1", "Quantity": 2, "MarketValue": 100.0, "BookValue": 90.0}],
                "Transactions": [{"Id": "t1", "Date": "2026-01-02", "Type": "buy", "SecurityId": "s1", "Quantity": 2, "Fee": 1, "Amount": -91},
                                 {"Id": "t2", "Date": "2026-01-03", "Type": "sell", "SecurityId": "missing", "Quantity": -1, "Fee": 0, "Amount": 45}]},
                {"Id": "a2", "Positions": null, "Transactions": null}],
        });
        let accounts = reference["Accounts"].take();
        let reference = json!({
            "Institution": {"Id": "a7c3e1", "Name": "FlinksCapital", "Accounts": accounts},
            "Securities": [{"Id": "s1", "Symbol": "XYZ", "Name": "XYZ Corp", "Price": 50, "Date": "2026-11-20T21:00:00.0000000Z", "Aliases": ["XYZ.TO"]}],
            "Value": 110.0, "Cash": 10.0
        });
        let bytes = serde_json::to_vec(&reference).unwrap();
        let read = InvestmentsTables::from_json(&bytes).unwrap();
        assert_eq!(read, InvestmentsTables::new(&interface).unwrap());
        let owned: Investments = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(
            owned.institution,
            Some(Institution::Object { id: Some("a7c3e1".into()), name: Some("FlinksCapital".into()) })
        );
        // A numeric id, as the interface writes it, is read as its text.
        let numeric: Investments = serde_json::from_value(json!({"Institution": {"Id": 14}, "Accounts": []})).unwrap();
        assert_eq!(numeric.institution, Some(Institution::Object { id: Some("14".into()), name: None }));
    }

    /// The decimal128 values of `column` of `table`, as the digits Arrow shows, and its size.
    fn decimals(table: &Table, column: &str) -> (Vec<Option<String>>, u8, i8) {
        match table.column(column) {
            Some(ColumnData::Decimal(values)) => (
                (0..values.len()).map(|row| values.is_valid(row).then(|| values.value_as_string(row))).collect(),
                values.precision(),
                values.scale(),
            ),
            other => panic!("{column}: {other:?}"),
        }
    }

    const EXACT: &[u8] = br#"{
        "Accounts": [{"Id": "a1", "Cash": 0.1, "AccountValue": "0.2", "CurrencyValue": -12345678901234.5678,
            "Positions": [{"Id": "p1", "SecurityId": "s1", "Quantity": 0.12345678, "MarketValue": 1e2, "BookValue": null,
                           "GainAmount": -0.3, "GainCurrencyAmount": 2.50E-2, "GainPercent": 0.1}],
            "Transactions": [{"Id": "t1", "Quantity": -3, "Fee": 9.99, "Amount": -1234.5}]}],
        "Securities": [{"Id": "s1", "Price": 12.34567891}],
        "Value": 0.3, "Cash": 0.1
    }"#;

    #[test]
    fn decimal_money_is_the_payloads_digits() {
        let tables = InvestmentsTables::read(EXACT, MoneyType::Decimal).unwrap();
        assert_eq!(tables.money, MoneyType::Decimal);
        let text = |values: &[&str]| values.iter().map(|v| Some((*v).to_owned())).collect::<Vec<_>>();
        assert_eq!(decimals(&tables.accounts, "cash"), (text(&["0.1000"]), 18, 4));
        assert_eq!(decimals(&tables.accounts, "account_value").0, text(&["0.2000"]));
        assert_eq!(decimals(&tables.accounts, "currency_value").0, text(&["-12345678901234.5678"]));
        assert_eq!(decimals(&tables.positions, "quantity"), (text(&["0.12345678"]), 18, 8));
        assert_eq!(decimals(&tables.positions, "price"), (text(&["12.34567891"]), 18, 8));
        assert_eq!(decimals(&tables.positions, "market_value").0, text(&["100.0000"]));
        assert_eq!(decimals(&tables.positions, "book_value").0, vec![None]);
        assert_eq!(decimals(&tables.positions, "gain_amount").0, text(&["-0.3000"]));
        assert_eq!(decimals(&tables.positions, "gain_currency_amount").0, text(&["0.0250"]));
        assert_eq!(decimals(&tables.transactions, "quantity").0, text(&["-3.00000000"]));
        assert_eq!(decimals(&tables.transactions, "fee").0, text(&["9.9900"]));
        assert_eq!(decimals(&tables.transactions, "amount").0, text(&["-1234.5000"]));
        assert_eq!(decimals(&tables.securities, "price").0, text(&["12.34567891"]));
        // A ratio is not money: it stays a float, as do the payload's totals.
        assert_eq!(tables.positions.column("gain_percent"), Some(&ColumnData::Float(vec![Some(0.1)].into())));
        assert_eq!((tables.value, tables.cash), (Some(0.3), Some(0.1)));
        // Float money is what it always was, and every other column is the same either way.
        let floats = InvestmentsTables::read(EXACT, MoneyType::Float).unwrap();
        assert_eq!(floats.money, MoneyType::Float);
        assert_eq!(floats.accounts.column("cash"), Some(&ColumnData::Float(vec![Some(0.1)].into())));
        assert_eq!(floats.positions.names(), tables.positions.names());
        assert_eq!(floats.positions.column("symbol"), tables.positions.column("symbol"));
    }

    #[test]
    fn an_empty_decimal_table_keeps_its_decimal_columns() {
        let tables = InvestmentsTables::read(br#"{"Accounts": []}"#, MoneyType::Decimal).unwrap();
        assert_eq!(decimals(&tables.positions, "market_value"), (vec![], 18, 4));
        assert_eq!(
            tables.transactions.schema().field_with_name("amount").unwrap().data_type().to_string(),
            "Decimal128(18, 4)"
        );
    }

    #[test]
    fn a_money_value_that_does_not_fit_is_the_payloads_error_naming_the_column() {
        let body = br#"{"Accounts": [{"Id": "a1", "Positions": [{"Id": "p1", "MarketValue": 10.12345}]}]}"#;
        match InvestmentsTables::read(body, MoneyType::Decimal) {
            Err(crate::Error::Decode { operation, message, .. }) => {
                assert_eq!(operation, "Investments");
                assert!(
                    message.starts_with("positions.market_value: 10.12345 has more than 4 decimal places"),
                    "{message}"
                );
                assert!(message.contains("decimal128(18, 4)"), "{message}");
            }
            other => panic!("{other:?}"),
        }
        let body = br#"{"Accounts": [{"Id": "a1", "Transactions": [{"Id": "t", "Amount": -1e15}]}]}"#;
        match InvestmentsTables::read(body, MoneyType::Decimal) {
            Err(crate::Error::Decode { message, .. }) => {
                assert!(message.starts_with("transactions.amount: -1e15 has more than 14 digits"), "{message}");
            }
            other => panic!("{other:?}"),
        }
        // As floats the same payloads read, as they always did.
        assert!(InvestmentsTables::read(body, MoneyType::Float).is_ok());
    }

    #[test]
    fn decimal_tables_round_trip_as_bytes() {
        let tables = InvestmentsTables::read(EXACT, MoneyType::Decimal).unwrap();
        for table in [&tables.accounts, &tables.positions, &tables.transactions, &tables.securities] {
            let again = Table::from_bytes(&table.to_bytes()).unwrap();
            assert_eq!(&again, table);
            assert_eq!(again.schema(), table.schema());
        }
    }
}
