//! What a user with several attributes sends.

/// A user's report of several attributes: one report naming its attribute (SMP), or one
/// report per attribute, in attribute order (SPL and the RS+ solutions, whose reports do
/// not say which attribute was sampled).
///
/// In JSON: `{"sampled": {"attribute": 2, "report": …}}` or `{"every": [ …, …, … ]}`.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "snake_case", deny_unknown_fields)
)]
pub enum MultidimReport<R> {
    /// SMP: the sampled attribute (its index, from 0) and its report.
    Sampled {
        /// The index of the attribute reported.
        attribute: u32,
        /// The attribute's report.
        report: R,
    },
    /// SPL, RS+FD, RS+RFD: a report per attribute.
    Every(Vec<R>),
}

impl<R> MultidimReport<R> {
    /// The report of `attribute`, if this report carries one.
    pub fn of(&self, attribute: usize) -> Option<&R> {
        match self {
            MultidimReport::Sampled {
                attribute: named,
                report,
            } => (*named as usize == attribute).then_some(report),
            MultidimReport::Every(reports) => reports.get(attribute),
        }
    }
}
