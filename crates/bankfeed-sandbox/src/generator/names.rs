//! Word lists the generator draws from. Employers, payees and people are invented; merchants
//! and securities are real names, as a statement or a brokerage account would show them.

pub(super) const FIRST_NAMES: &[&str] = &[
    "Alex", "Camille", "Jordan", "Gabriel", "Sophie", "Olivier", "Maya", "Nathan", "Chloé", "Samuel", "Léa", "William",
    "Emma", "Thomas", "Amira", "Noah", "Isabelle", "Marc",
];

pub(super) const LAST_NAMES: &[&str] = &[
    "Tremblay",
    "Gagnon",
    "Roy",
    "Côté",
    "Bouchard",
    "Gauthier",
    "Morin",
    "Lavoie",
    "Fortin",
    "Smith",
    "Brown",
    "Wilson",
    "MacDonald",
    "Taylor",
    "Nguyen",
    "Singh",
    "Patel",
    "Leblanc",
];

/// (city, province, first letter of its postal codes, area code).
pub(super) const CITIES: &[(&str, &str, char, &str)] = &[
    ("Montreal", "QC", 'H', "514"),
    ("Quebec", "QC", 'G', "418"),
    ("Toronto", "ON", 'M', "416"),
    ("Ottawa", "ON", 'K', "613"),
    ("Vancouver", "BC", 'V', "604"),
    ("Calgary", "AB", 'T', "403"),
    ("Halifax", "NS", 'B', "902"),
    ("Winnipeg", "MB", 'R', "204"),
];

pub(super) const STREETS: &[&str] = &[
    "Rue Sherbrooke",
    "Maple Avenue",
    "King Street",
    "Boulevard Saint-Laurent",
    "Elm Street",
    "Queen Street",
    "Rue Sainte-Catherine",
    "Oak Crescent",
    "Park Avenue",
];

pub(super) const EMPLOYERS: &[&str] = &[
    "MAPLELEAF LOGISTICS",
    "NORTHWIND TRADERS",
    "BOREAL ENERGY",
    "LAURENTIAN FOODS",
    "GLACIER SOFTWARE",
    "TUNDRA HEALTH",
    "CASCADIA BUILDERS",
    "PRAIRIE MUTUAL",
    "ST-LAWRENCE SHIPPING",
    "AURORA RETAIL",
];

/// (payee, lowest and highest monthly amount in cents).
pub(super) const HYDRO: &[(&str, i64, i64)] =
    &[("HYDRO-QUEBEC", 6_000, 18_000), ("TORONTO HYDRO", 7_000, 16_000), ("BC HYDRO", 5_000, 14_000)];
pub(super) const PHONE: &[(&str, i64, i64)] = &[
    ("BELL CANADA", 5_500, 9_500),
    ("ROGERS WIRELESS", 6_000, 11_000),
    ("TELUS MOBILITY", 5_000, 9_000),
    ("FIDO", 4_000, 7_500),
];
pub(super) const INTERNET: &[(&str, i64, i64)] =
    &[("VIDEOTRON", 6_000, 9_000), ("COGECO", 5_500, 8_500), ("SHAW", 7_000, 10_000)];

/// (merchant, lowest and highest purchase in cents).
pub(super) const MERCHANTS: &[(&str, i64, i64)] = &[
    ("TIM HORTONS", 250, 1_800),
    ("METRO", 1_500, 18_000),
    ("IGA", 1_200, 16_000),
    ("LOBLAWS", 2_000, 22_000),
    ("COSTCO WHOLESALE", 4_000, 35_000),
    ("AMAZON.CA", 1_000, 15_000),
    ("SHELL", 2_500, 9_000),
    ("PETRO-CANADA", 2_500, 9_500),
    ("SAQ", 1_500, 8_000),
    ("UBER EATS", 1_800, 6_500),
    ("NETFLIX.COM", 1_699, 2_099),
    ("PHARMAPRIX", 800, 7_500),
    ("CANADIAN TIRE", 1_500, 25_000),
    ("STARBUCKS", 400, 1_500),
    ("SPOTIFY", 1_199, 1_199),
    ("DOLLARAMA", 300, 4_000),
];

pub(super) const CONTACTS: &[&str] =
    &["J TREMBLAY", "M GAGNON", "S ROY", "A PATEL", "K NGUYEN", "L FORTIN", "R SINGH", "C MORIN"];

/// A security: (name, symbol, currency, price range in cents, aliases, CUSIP, ISIN).
/// `None` CUSIP is absent on the wire; the ISIN is `Absent`, `Null` or a value, the three
/// shapes docs/protocol.md#investments says happen.
pub(super) struct SecurityName {
    pub name: &'static str,
    pub symbol: &'static str,
    pub currency: &'static str,
    pub price: (i64, i64),
    pub aliases: &'static [&'static str],
    pub cusip: Option<&'static str>,
    pub isin: Isin,
}

#[derive(Clone, Copy)]
pub(crate) enum Isin {
    Absent,
    Null,
    Value(&'static str),
}

pub(super) const SECURITIES: &[SecurityName] = &[
    SecurityName {
        name: "Royal Bank of Canada",
        symbol: "RY",
        currency: "CAD",
        price: (12_000, 19_000),
        aliases: &["RY.TO", "RY"],
        cusip: Some("780087102"),
        isin: Isin::Value("CA7800871021"),
    },
    SecurityName {
        name: "Toronto-Dominion Bank",
        symbol: "TD",
        currency: "CAD",
        price: (7_500, 10_500),
        aliases: &["TD.TO"],
        cusip: Some("891160509"),
        isin: Isin::Value("CA8911605092"),
    },
    SecurityName {
        name: "Enbridge Inc.",
        symbol: "ENB",
        currency: "CAD",
        price: (4_800, 6_800),
        aliases: &["ENB.TO", "ENB"],
        cusip: Some("29250N105"),
        isin: Isin::Null,
    },
    SecurityName {
        name: "Shopify Inc.",
        symbol: "SHOP",
        currency: "CAD",
        price: (9_000, 22_000),
        aliases: &["SHOP.TO"],
        cusip: None,
        isin: Isin::Value("CA82509L1076"),
    },
    SecurityName {
        name: "BCE Inc.",
        symbol: "BCE",
        currency: "CAD",
        price: (3_000, 5_000),
        aliases: &["BCE.TO"],
        cusip: Some("05534B760"),
        isin: Isin::Absent,
    },
    SecurityName {
        name: "Canadian National Railway",
        symbol: "CNR",
        currency: "CAD",
        price: (14_000, 18_000),
        aliases: &["CNR.TO", "CNI"],
        cusip: None,
        isin: Isin::Null,
    },
    SecurityName {
        name: "iShares S&P/TSX 60 Index ETF",
        symbol: "XIU",
        currency: "CAD",
        price: (3_200, 4_200),
        aliases: &["XIU.TO"],
        cusip: Some("46428D108"),
        isin: Isin::Value("CA46428D1087"),
    },
    SecurityName {
        name: "Apple Inc.",
        symbol: "AAPL",
        currency: "USD",
        price: (18_000, 26_000),
        aliases: &["AAPL", "AAPL.O"],
        cusip: Some("037833100"),
        isin: Isin::Value("US0378331005"),
    },
    SecurityName {
        name: "Microsoft Corporation",
        symbol: "MSFT",
        currency: "USD",
        price: (38_000, 52_000),
        aliases: &["MSFT"],
        cusip: Some("594918104"),
        isin: Isin::Value("US5949181045"),
    },
    SecurityName {
        name: "Amazon.com Inc.",
        symbol: "AMZN",
        currency: "USD",
        price: (17_000, 24_000),
        aliases: &["AMZN"],
        cusip: None,
        isin: Isin::Absent,
    },
    SecurityName {
        name: "Johnson & Johnson",
        symbol: "JNJ",
        currency: "USD",
        price: (14_500, 17_500),
        aliases: &["JNJ"],
        cusip: Some("478160104"),
        isin: Isin::Null,
    },
    SecurityName {
        name: "The Coca-Cola Company",
        symbol: "KO",
        currency: "USD",
        price: (5_800, 7_400),
        aliases: &["KO"],
        cusip: Some("191216100"),
        isin: Isin::Value("US1912161007"),
    },
    SecurityName {
        name: "Vanguard S&P 500 ETF",
        symbol: "VOO",
        currency: "USD",
        price: (45_000, 56_000),
        aliases: &["VOO"],
        cusip: Some("922908363"),
        isin: Isin::Value("US9229083632"),
    },
];
