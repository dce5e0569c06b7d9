//! A login's investment accounts: trades over the last year, and the positions they leave.
//!
//! Positions are not drawn separately: they are what the trades add up to (net quantity, and
//! book value at average cost), so a transaction-count knob of 0 leaves empty accounts and any
//! count keeps positions and trades telling the same story.

use super::names::{Isin, SecurityName, SECURITIES};
use super::random::hash;
use super::{Cents, Guid, Rng, DAYS};

pub(crate) struct Portfolio {
    pub accounts: Vec<InvestmentAccount>,
    /// The sandbox's whole list of securities, whether held or not: every login sees every
    /// shape a Security can take (CUSIP absent, ISIN null or absent).
    pub securities: Vec<Security>,
}

pub(crate) struct Security {
    pub id: Guid,
    pub name: &'static str,
    pub symbol: &'static str,
    pub currency: &'static str,
    pub price: Cents,
    pub aliases: &'static [&'static str],
    pub cusip: Option<&'static str>,
    pub isin: Isin,
}

pub(crate) struct InvestmentAccount {
    pub id: Guid,
    pub number: String,
    /// `cash`, `margin`, `tfsa` or `rrsp`.
    pub kind: &'static str,
    pub registered: bool,
    pub currency: &'static str,
    pub name: String,
    pub cash: Cents,
    pub positions: Vec<Position>,
    pub transactions: Vec<Trade>,
}

pub(crate) struct Position {
    pub id: Guid,
    /// Index into `Portfolio::securities` (the same as into the list of names).
    pub security: usize,
    pub quantity: i64,
    pub book_value: Cents,
}

pub(crate) struct Trade {
    pub id: Guid,
    pub day: u16,
    /// Index into `Portfolio::securities` (the same as into the list of names).
    pub security: usize,
    /// Negative for a sale.
    pub quantity: i64,
    pub price: Cents,
    pub fee: Cents,
}

impl Trade {
    /// Money in (a sale) or out (a purchase), net of the fee.
    pub(crate) fn amount(&self) -> Cents {
        Cents(-self.quantity * self.price.0 - self.fee.0)
    }
}

impl InvestmentAccount {
    pub(crate) fn value(&self, securities: &[Security]) -> Cents {
        Cents(self.cash.0 + self.positions.iter().map(|position| position.market_value(securities).0).sum::<i64>())
    }

    pub(crate) fn full_account_id(&self) -> String {
        let registration = if self.registered { "Registered" } else { "NonRegistered" };
        format!("{registration}:{}-{}-{}", self.number, self.kind, self.currency)
    }
}

impl Position {
    pub(crate) fn market_value(&self, securities: &[Security]) -> Cents {
        // Positions only point into their own portfolio's securities.
        Cents(self.quantity * securities.get(self.security).map_or(0, |security| security.price.0))
    }
}

const KINDS: [&str; 4] = ["cash", "margin", "tfsa", "rrsp"];
const CURRENCIES: [&str; 2] = ["CAD", "USD"];
const FEES: [i64; 3] = [0, 495, 995];

/// The last close before the as-of morning's refresh.
pub(crate) const PRICE_DATE: &str = "2026-11-19T21:00:00.0000000Z";

impl Portfolio {
    /// `trades`: None for a natural history (about 60 trades in all), Some(n) for exactly n.
    /// Securities' ids and prices depend on the sandbox seed only: a security is the same for
    /// every login.
    #[expect(
        clippy::indexing_slicing,
        reason = "combos keeps 2 to 4 of 8 entries, per_account has its length, and index() draws below it"
    )]
    pub(crate) fn generate(seed: u64, login: &Rng, trades: Option<usize>) -> Portfolio {
        let mut rng = login.fork("portfolio");
        let mut combos: Vec<(&str, &str)> =
            KINDS.iter().flat_map(|kind| CURRENCIES.iter().map(move |currency| (*kind, *currency))).collect();
        rng.shuffle(&mut combos);
        combos.truncate(rng.range(2, 4) as usize);
        // Both currencies appear; flipping one account cannot collide with another when all
        // the others are in the first currency.
        if combos.iter().all(|(_, currency)| *currency == combos[0].1) {
            let last = combos.len() - 1;
            combos[last].1 = if combos[0].1 == "CAD" { "USD" } else { "CAD" };
        }

        let total = trades.unwrap_or_else(|| rng.range(50, 70) as usize);
        let mut per_account = vec![0usize; combos.len()];
        if trades.is_none() {
            // Natural: every account trades.
            per_account.fill(1);
        }
        let already: usize = per_account.iter().sum();
        for _ in already..total {
            per_account[rng.index(combos.len())] += 1;
        }

        let accounts: Vec<InvestmentAccount> = combos
            .iter()
            .zip(per_account)
            .map(|((kind, currency), count)| account(seed, kind, currency, count, &mut rng))
            .collect();

        let securities = SECURITIES.iter().map(|name| security(seed, name)).collect();
        Portfolio { accounts, securities }
    }

    pub(crate) fn value(&self) -> Cents {
        Cents(self.accounts.iter().map(|account| account.value(&self.securities).0).sum())
    }

    pub(crate) fn cash(&self) -> Cents {
        Cents(self.accounts.iter().map(|account| account.cash.0).sum())
    }
}

fn security_rng(seed: u64, name: &SecurityName) -> Rng {
    Rng::new(hash(&[&seed.to_le_bytes(), b"security", name.symbol.as_bytes()]))
}

fn price_of(seed: u64, name: &SecurityName) -> i64 {
    let mut rng = security_rng(seed, name);
    rng.next();
    rng.range(name.price.0, name.price.1)
}

fn security(seed: u64, name: &'static SecurityName) -> Security {
    Security {
        id: Guid::draw(&mut security_rng(seed, name)),
        name: name.name,
        symbol: name.symbol,
        currency: name.currency,
        price: Cents(price_of(seed, name)),
        aliases: name.aliases,
        cusip: name.cusip,
        isin: name.isin,
    }
}

#[expect(
    clippy::indexing_slicing,
    reason = "universe indexes SECURITIES; holdings and prices have universe's length, and every slot is drawn below it"
)]
fn account(seed: u64, kind: &'static str, currency: &'static str, count: usize, rng: &mut Rng) -> InvestmentAccount {
    let id = Guid::draw(rng);
    let number: String =
        (0..rng.range(6, 7)).map(|_| *rng.pick(b"0123456789ABCDEFGHJKLMNPQRSTUVWXYZ") as char).collect();
    let registered = matches!(kind, "tfsa" | "rrsp");
    let label = match kind {
        "tfsa" => "TFSA",
        "rrsp" => "RRSP",
        "margin" => "Margin",
        _ => "Cash",
    };
    // Each account trades a few securities of its own currency, so its value needs no FX.
    let mut universe: Vec<usize> =
        SECURITIES.iter().enumerate().filter(|(_, name)| name.currency == currency).map(|(index, _)| index).collect();
    rng.shuffle(&mut universe);
    universe.truncate(rng.range(2, 4) as usize);
    let prices: Vec<i64> = universe.iter().map(|index| price_of(seed, &SECURITIES[*index])).collect();

    let mut days: Vec<u16> = (0..count).map(|_| rng.range(0, i64::from(DAYS) - 1) as u16).collect();
    days.sort_unstable_by(|a, b| b.cmp(a));

    // (quantity, book value in cents) per security of the universe.
    let mut holdings = vec![(0i64, 0i64); universe.len()];
    let mut transactions = Vec::with_capacity(count);
    for day in days {
        let start = rng.index(universe.len());
        let held = (0..universe.len()).map(|step| (start + step) % universe.len()).find(|slot| holdings[*slot].0 > 0);
        let selling = held.filter(|_| rng.chance(30));
        let slot = selling.unwrap_or_else(|| rng.index(universe.len()));
        // Traded within about 20% of today's price.
        let price = prices[slot] * rng.range(80, 115) / 100;
        let fee = *rng.pick(&FEES);
        let quantity = if let Some(slot) = selling {
            let (quantity, book) = holdings[slot];
            let sold = rng.range(1, quantity);
            // Average cost: the book value shrinks in proportion to the shares sold.
            holdings[slot] = (quantity - sold, book * (quantity - sold) / quantity);
            -sold
        } else {
            let bought = if price > 30_000 { rng.range(1, 20) } else { rng.range(1, 100) };
            let (quantity, book) = holdings[slot];
            holdings[slot] = (quantity + bought, book + bought * price + fee);
            bought
        };
        transactions.push(Trade {
            id: Guid::draw(rng),
            day,
            security: universe[slot],
            quantity,
            price: Cents(price),
            fee: Cents(fee),
        });
    }
    // The newest trade first, as a brokerage lists them.
    transactions.reverse();

    let positions = holdings
        .iter()
        .zip(&universe)
        .filter(|((quantity, _), _)| *quantity > 0)
        .map(|((quantity, book), security)| Position {
            id: Guid::draw(rng),
            security: *security,
            quantity: *quantity,
            book_value: Cents(*book),
        })
        .collect();
    InvestmentAccount {
        id,
        number,
        kind,
        registered,
        currency,
        name: format!("{label} ({currency})"),
        cash: Cents(rng.range(0, 800_000)),
        positions,
        transactions,
    }
}
