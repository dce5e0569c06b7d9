//! The institution lists the widget offers: banking, or investment with `productType=investment`
//! when Investments is enabled for the customer (`SandboxConfig::investments`). The test
//! institution is in both, and only with `demo=true`, as the service shows it
//! (docs/sandbox.md#the-hosted-widget). The other names make the list look like the real one;
//! the sandbox has no users at them, so they are shown but cannot be chosen.

use super::params::{Params, Product};
use crate::sandbox::reply::{INSTITUTION, INSTITUTION_ID};

/// One entry of a list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    /// What events and the redirect call it (`FlinksCapital`), and its element id's tail.
    pub id: &'static str,
    /// What the person reads (`Flinks Capital`).
    pub name: &'static str,
    /// Whether the sandbox can log in there.
    pub available: bool,
}

/// The name the test institution is shown under.
pub(crate) const TEST_INSTITUTION_NAME: &str = "Flinks Capital";

const BANKING: [(&str, &str); 7] = [
    ("RBC", "RBC Royal Bank"),
    ("TD", "TD Canada Trust"),
    ("BMO", "BMO Bank of Montreal"),
    ("Scotia", "Scotiabank"),
    ("CIBC", "CIBC"),
    ("National", "National Bank"),
    ("Desjardins", "Desjardins"),
];

const INVESTMENT: [(&str, &str); 6] = [
    ("Questrade", "Questrade"),
    ("Wealthsimple", "Wealthsimple"),
    ("Qtrade", "Qtrade Direct Investing"),
    ("RBCDirectInvesting", "RBC Direct Investing"),
    ("TDDirectInvesting", "TD Direct Investing"),
    ("BMOInvestorLine", "BMO InvestorLine"),
];

/// Which list a flow shows: investment only when asked for and enabled.
pub(crate) fn product_shown(params: &Params, investments_enabled: bool) -> Product {
    if investments_enabled {
        params.product
    } else {
        Product::Banking
    }
}

/// The entries of `product`'s list, the test institution first when `demo`.
pub(crate) fn entries(product: Product, demo: bool) -> Vec<Entry> {
    let others = match product {
        Product::Banking => &BANKING[..],
        Product::Investment => &INVESTMENT[..],
    };
    let test = demo.then_some(Entry { id: INSTITUTION, name: TEST_INSTITUTION_NAME, available: true });
    test.into_iter().chain(others.iter().map(|&(id, name)| Entry { id, name, available: false })).collect()
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
        assert_eq!(entries(Product::Banking, true)[0].name, TEST_INSTITUTION_NAME);
        assert!(entries(Product::Banking, false).iter().all(|entry| entry.id != INSTITUTION));
        assert!(entries(Product::Investment, true).iter().any(|entry| entry.id == "Questrade"));
    }

    #[test]
    fn preselection_by_identifier_name_or_number() {
        assert_eq!(preselected("flinkscapital"), Some(INSTITUTION));
        assert_eq!(preselected("Flinks Capital"), Some(INSTITUTION));
        assert_eq!(preselected("14"), Some(INSTITUTION));
        assert_eq!(preselected("RBC"), None);
    }
}
