//! A login's investment accounts: trades over the last year, and the positions they leave.
//!
//! Positions are not drawn separately: they are what the trades add up to (net quantity, and
//! book value at average cost), so a transaction-count knob of 0 leaves empty accounts and any
//! count keeps positions and trades telling the same story.
//!
//! Past `FIRST_AS_OF`, prices move a little every day and an account trades now and then, each
//! day from a stream of its own date, so the clock's moves (docs/sandbox.md#the-clock) change
//! values, positions and cash the same way whatever path the clock took.

use super::names::{Isin, SecurityName, SECURITIES};
use super::random::hash;
use super::{Cents, Guid, Rng, DAYS};
use crate::world::calendar::{civil_after, AsOf};

pub(crate) struct Portfolio {
    /// The day the data is as of: every trade's `day` counts back from it.
    pub clock: AsOf,
    /// When the prices were taken: the last close before the clock's morning.
    pub price_date: String,
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
    /// Days of its date before the clock.
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

/// The last close before the clock's morning refresh: the day before, 21:00 UTC.
fn price_date(clock: AsOf) -> String {
    let (year, month, day) = civil_after(i64::from(clock.days_after_first()) - 1);
    format!("{year:04}-{month:02}-{day:02}T21:00:00.0000000Z")
}

/// The chance, in percent, that an account trades on a day past `FIRST_AS_OF`.
const TRADE_PERCENT: u64 = 6;

/// The most a price moves in a day, in hundredths of a percent either way.
const DAILY_MOVE: i64 = 150;

impl Portfolio {
    /// `trades`: None for a natural history (about 60 trades in all), Some(n) for exactly n.
    /// Securities' ids and prices depend on the sandbox seed only: a security is the same for
    /// every login.
    #[expect(
        clippy::indexing_slicing,
        reason = "combos keeps 2 to 4 of 8 entries, per_account has its length, and index() draws below it"
    )]
    pub(crate) fn generate(seed: u64, login: &Rng, trades: Option<usize>, clock: AsOf) -> Portfolio {
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

        let paths: Vec<Vec<i64>> = SECURITIES.iter().map(|name| price_path(seed, name, clock)).collect();
        // With a count of 0, the accounts stay empty as the clock moves.
        let trading = trades != Some(0);
        let accounts: Vec<InvestmentAccount> = combos
            .iter()
            .zip(per_account)
            .map(|((kind, currency), count)| account(seed, kind, currency, count, &mut rng, &paths, trading))
            .collect();

        let securities = SECURITIES
            .iter()
            .zip(&paths)
            .map(|(name, path)| security(seed, name, path.last().copied().unwrap_or_default()))
            .collect();
        Portfolio { clock, price_date: price_date(clock), accounts, securities }
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

/// The security's close on `FIRST_AS_OF` and on every day after it up to `clock`: each day's
/// move is drawn from the seed, the symbol and the date alone.
fn price_path(seed: u64, name: &SecurityName, clock: AsOf) -> Vec<i64> {
    let mut price = price_of(seed, name);
    let mut path = Vec::with_capacity(usize::from(clock.days_after_first()) + 1);
    path.push(price);
    for date in 1..=clock.days_after_first() {
        let mut rng = Rng::new(hash(&[&seed.to_le_bytes(), b"price", name.symbol.as_bytes(), &date.to_le_bytes()]));
        let change = rng.range(-DAILY_MOVE, DAILY_MOVE);
        price = (price * (10_000 + change) / 10_000).max(1);
        path.push(price);
    }
    path
}

fn security(seed: u64, name: &'static SecurityName, price: i64) -> Security {
    Security {
        id: Guid::draw(&mut security_rng(seed, name)),
        name: name.name,
        symbol: name.symbol,
        currency: name.currency,
        price: Cents(price),
        aliases: name.aliases,
        cusip: name.cusip,
        isin: name.isin,
    }
}

#[expect(
    clippy::indexing_slicing,
    reason = "universe indexes SECURITIES; holdings and prices have universe's length, and every slot is drawn below it"
)]
fn account(
    seed: u64,
    kind: &'static str,
    currency: &'static str,
    count: usize,
    rng: &mut Rng,
    paths: &[Vec<i64>],
    trading: bool,
) -> InvestmentAccount {
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

    // The positions of the first year keep the Ids they were drawn with, in the same order.
    let position_ids: Vec<Option<Guid>> =
        holdings.iter().map(|(quantity, _)| (*quantity > 0).then(|| Guid::draw(rng))).collect();
    let mut cash = rng.range(0, 800_000);

    let today = paths.first().map_or(0, |path| path.len().saturating_sub(1));
    let mut later = Vec::new();
    for date in 1..=today {
        if !trading {
            break;
        }
        let mut day = Rng::new(hash(&[&id.0.to_le_bytes(), b"trades", &date.to_le_bytes()]));
        if !day.chance(TRADE_PERCENT) {
            continue;
        }
        let slot = day.index(universe.len());
        let price = paths[universe[slot]].get(date).copied().unwrap_or(prices[slot]);
        let fee = *day.pick(&FEES);
        let (quantity, book) = holdings[slot];
        let quantity = if quantity > 0 && day.chance(40) {
            let sold = day.range(1, quantity);
            holdings[slot] = (quantity - sold, book * (quantity - sold) / quantity);
            -sold
        } else {
            let bought = if price > 30_000 { day.range(1, 10) } else { day.range(1, 50) };
            // No margin in the sandbox: a purchase the cash cannot pay for is not made.
            if bought * price + fee > cash {
                continue;
            }
            holdings[slot] = (quantity + bought, book + bought * price + fee);
            bought
        };
        let trade = Trade {
            id: Guid::draw(&mut day),
            day: 0,
            security: universe[slot],
            quantity,
            price: Cents(price),
            fee: Cents(fee),
        };
        cash += trade.amount().0;
        later.push((date, trade));
    }
    // Days before the clock, newest first; trades older than the year shown are dropped.
    let today = today as i64;
    let mut shown: Vec<Trade> = later
        .into_iter()
        .rev()
        .filter_map(|(date, trade)| {
            let day = u16::try_from(today - date as i64).ok()?;
            Some(Trade { day, ..trade })
        })
        .collect();
    let moved = u16::try_from(today).unwrap_or(u16::MAX);
    shown.extend(transactions.into_iter().filter_map(|trade| {
        let day = trade.day.checked_add(moved).filter(|day| *day < DAYS)?;
        Some(Trade { day, ..trade })
    }));

    let positions = holdings
        .iter()
        .zip(&universe)
        .zip(&position_ids)
        .filter(|(((quantity, _), _), _)| *quantity > 0)
        .map(|(((quantity, book), security), drawn)| Position {
            id: (*drawn).unwrap_or_else(|| Guid::derive(&[&id.0.to_le_bytes(), b"position", &security.to_le_bytes()])),
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
        cash: Cents(cash),
        positions,
        transactions: shown,
    }
}
