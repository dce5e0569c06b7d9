//! The institution lists the widget offers: banking, or investment with `productType=investment`
//! when Investments is enabled for the customer (`SandboxConfig::investments`). The test
//! institution is in both, and only with `demo=true`, as the service shows it
//! (docs/sandbox.md#the-hosted-widget). The other names make the list look like the real one;
//! the sandbox has no users at them, so they are shown but cannot be chosen. Each is named as
//! the institution names itself in English and in French (`language=fr`): a name is the
//! institution's own, not a word of the widget's (those are in `texts.rs`).

use super::params::{Params, Product};
use crate::server::reply::{INSTITUTION, INSTITUTION_ID};

/// One entry of a list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    /// What events and the redirect call it (`FlinksCapital`), and its element id's tail.
    pub id: &'static str,
    /// What the person reads (`Flinks Capital`), in the flow's language.
    pub name: &'static str,
    /// Whether the sandbox can log in there.
    pub available: bool,
}

/// The name the test institution is shown under.
pub(crate) const TEST_INSTITUTION_NAME: &str = "Flinks Capital";

/// Identifier, English name, French name.
const BANKING: [(&str, &str, &str); 7] = [
    ("RBC", "RBC Royal Bank", "RBC Banque Royale"),
    ("TD", "TD Canada Trust", "TD Canada Trust"),
    ("BMO", "BMO Bank of Montreal", "BMO Banque de Montréal"),
    ("Scotia", "Scotiabank", "Banque Scotia"),
    ("CIBC", "CIBC", "CIBC"),
    ("National", "National Bank", "Banque Nationale"),
    ("Desjardins", "Desjardins", "Desjardins"),
];

const INVESTMENT: [(&str, &str, &str); 6] = [
    ("Questrade", "Questrade", "Questrade"),
    ("Wealthsimple", "Wealthsimple", "Wealthsimple"),
    ("Qtrade", "Qtrade Direct Investing", "Qtrade Investissement direct"),
    ("RBCDirectInvesting", "RBC Direct Investing", "RBC Placements en Direct"),
    ("TDDirectInvesting", "TD Direct Investing", "Placements directs TD"),
    ("BMOInvestorLine", "BMO InvestorLine", "BMO Ligne d'action"),
];

/// Which list a flow shows: investment only when asked for and enabled.
pub(crate) fn product_shown(params: &Params, investments_enabled: bool) -> Product {
    if investments_enabled {
        params.product
    } else {
        Product::Banking
    }
}

/// The entries of `product`'s list, the test institution first when `demo`, named in French when
/// `french`.
pub(crate) fn entries(product: Product, demo: bool, french: bool) -> Vec<Entry> {
    let others = match product {
        Product::Banking => &BANKING[..],
        Product::Investment => &INVESTMENT[..],
    };
    let test = demo.then_some(Entry { id: INSTITUTION, name: TEST_INSTITUTION_NAME, available: true });
    let named = |&(id, english, in_french): &(&'static str, &'static str, &'static str)| Entry {
        id,
        name: if french { in_french } else { english },
        available: false,
    };
    test.into_iter().chain(others.iter().map(named)).collect()
}

/// The institution `institution=` names, when the sandbox knows it: its identifier or its number
/// (the Institutions operation's `Id`), in any case.
pub(crate) fn preselected(given: &str) -> Option<&'static str> {
    let given = given.trim();
    let compact: String = given.chars().filter(|c| !c.is_whitespace()).collect();
    (compact.eq_ignore_ascii_case(INSTITUTION) || given == INSTITUTION_ID.to_string()).then_some(INSTITUTION)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_test_institution_only_with_demo() {
        assert_eq!(entries(Product::Banking, true, false)[0].name, TEST_INSTITUTION_NAME);
        assert!(entries(Product::Banking, false, false).iter().all(|entry| entry.id != INSTITUTION));
        assert!(entries(Product::Investment, true, false).iter().any(|entry| entry.id == "Questrade"));
    }

    #[test]
    fn names_follow_the_language_and_ids_do_not() {
        let english = entries(Product::Banking, true, false);
        let french = entries(Product::Banking, true, true);
        assert_eq!(
            english.iter().map(|entry| entry.id).collect::<Vec<_>>(),
            french.iter().map(|entry| entry.id).collect::<Vec<_>>()
        );
        assert!(french.iter().any(|entry| entry.name == "Banque Nationale"));
        assert!(english.iter().any(|entry| entry.name == "National Bank"));
    }

    #[test]
    fn preselection_by_identifier_name_or_number() {
        assert_eq!(preselected("flinkscapital"), Some(INSTITUTION));
        assert_eq!(preselected("Flinks Capital"), Some(INSTITUTION));
        assert_eq!(preselected("14"), Some(INSTITUTION));
        assert_eq!(preselected("RBC"), None);
    }
}
