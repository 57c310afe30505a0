//! Tables of users with several categorical attributes each, and the two shipped with
//! this crate: UCI Adult (ten attributes) and ACSEmployment (Montana, eighteen).

use std::collections::HashMap;
use std::io::Read;
use std::sync::OnceLock;

use ldp_core::DomainSize;
use serde::{Deserialize, Serialize};

use super::Population;

/// Users with one item of each of `d` attributes: attribute `j` has a name, a domain
/// `0..k_j` and a label for each of its codes; a row holds one user's codes.
///
/// The rows are stored row-major, so [`Table::row`] is the slice a multidimensional
/// client takes (`ldp_core::multidim::Multidim::perturb`), and [`Table::domain_sizes`]
/// the domains it is built over.
///
/// ```
/// use ldp_attack::data::Table;
/// let adult = Table::adult();
/// assert_eq!((adult.len(), adult.dimensions()), (45_222, 10));
/// let sex = adult.index_of("sex").unwrap();
/// assert_eq!(adult.labels(sex), ["Female", "Male"]);
/// assert_eq!(adult.label(sex, adult.row(0)[sex]), "Male");
/// ```
///
/// Several attributes collected under LDP, from the shipped table:
///
/// ```
/// use ldp_attack::data::Table;
/// use ldp_core::multidim::{Multidim, Solution};
/// use ldp_core::simulation::{stream_rng, Role};
/// use ldp_core::{Epsilon, Estimator, UnaryEncoding};
///
/// let table = Table::adult().select(&[6, 7])?; // race and sex
/// let smp = Multidim::new(Solution::Smp, Epsilon::new(2.0)?, table.domain_sizes(), UnaryEncoding::optimized)?;
/// let mut server = smp.aggregator();
/// let mut rng = stream_rng(3, 0, Role::Genuine, 0);
/// for row in table.rows() {
///     server.add(&smp.perturb(row, &mut rng)?)?;
/// }
/// let estimate = server.estimate(Estimator::Unbiased)?;
/// let male = table.frequencies(1)[1];
/// assert!((estimate[1][1] - male).abs() < 0.05);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "TableState")]
pub struct Table {
    names: Vec<String>,
    labels: Vec<Vec<String>>,
    #[serde(skip)]
    domains: Vec<DomainSize>,
    /// Row-major codes: row `i` is `codes[i * d..(i + 1) * d]`.
    codes: Vec<u32>,
}

/// The serialized form, validated by [`Table::from_row_major`] when read back.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TableState {
    names: Vec<String>,
    labels: Vec<Vec<String>>,
    codes: Vec<u32>,
}

impl TryFrom<TableState> for Table {
    type Error = TableError;
    fn try_from(state: TableState) -> Result<Self, TableError> {
        Self::from_row_major(state.names, state.labels, state.codes)
    }
}

/// A table could not be built, read or cut.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TableError {
    /// No attributes.
    #[error("the table has no attributes")]
    NoAttributes,
    /// No rows.
    #[error("the table has no rows")]
    Empty,
    /// The names and the label lists do not pair up.
    #[error("{names} attribute names but {labels} label lists")]
    Arity {
        /// Number of names.
        names: usize,
        /// Number of label lists.
        labels: usize,
    },
    /// Two attributes share a name.
    #[error("two attributes are named {name:?}")]
    DuplicateName {
        /// The shared name.
        name: String,
    },
    /// An attribute has fewer than two labels: its domain would be too small for any
    /// LDP mechanism.
    #[error("attribute {attribute} ({name:?}) has {labels} label(s); at least 2 are needed")]
    TooFewLabels {
        /// The attribute's index.
        attribute: usize,
        /// The attribute's name.
        name: String,
        /// Its number of labels.
        labels: usize,
    },
    /// An attribute lists one label twice.
    #[error("attribute {attribute} ({name:?}) lists the label {label:?} twice")]
    DuplicateLabel {
        /// The attribute's index.
        attribute: usize,
        /// The attribute's name.
        name: String,
        /// The repeated label.
        label: String,
    },
    /// A row does not hold one code per attribute.
    #[error("row {row} has {width} codes, expected {expected}")]
    RowWidth {
        /// 0-based row index.
        row: usize,
        /// Its number of codes.
        width: usize,
        /// The number of attributes.
        expected: usize,
    },
    /// A row-major code list is not a whole number of rows.
    #[error("{codes} codes do not make whole rows of {width}")]
    Ragged {
        /// Number of codes.
        codes: usize,
        /// The number of attributes.
        width: usize,
    },
    /// A code lies outside its attribute's domain.
    #[error("row {row}, attribute {attribute}: code {code} is outside 0..{k}")]
    Code {
        /// 0-based row index.
        row: usize,
        /// The attribute's index.
        attribute: usize,
        /// The code.
        code: u32,
        /// The attribute's domain size.
        k: u32,
    },
    /// [`Table::select`] was given an attribute the table does not have.
    #[error("attribute {attribute} does not exist: the table has {dimensions}")]
    NoSuchAttribute {
        /// The index asked for.
        attribute: usize,
        /// The number of attributes.
        dimensions: usize,
    },
    /// A line of a CSV text could not be read.
    #[error("line {line}: {reason}")]
    Parse {
        /// 1-based line number (0 when unknown).
        line: u64,
        /// What is wrong.
        reason: String,
    },
}

impl Table {
    /// A table of `rows`, each holding one code per attribute: attribute `j` is named
    /// `names[j]` and its codes `0..labels[j].len()` stand for `labels[j]`, in order.
    ///
    /// Checks that there is at least one attribute and one row, that names are distinct,
    /// that every attribute has at least two distinct labels, and that every row has one
    /// code per attribute, each within its attribute's domain.
    ///
    /// ```
    /// use ldp_attack::data::{Table, TableError};
    /// let names = vec!["colour".to_string(), "size".to_string()];
    /// let labels = vec![
    ///     vec!["blue".to_string(), "green".to_string(), "red".to_string()],
    ///     vec!["L".to_string(), "S".to_string()],
    /// ];
    /// let t = Table::new(names.clone(), labels.clone(), vec![vec![2, 0], vec![0, 1]])?;
    /// assert_eq!((t.len(), t.dimensions(), t.row(0)), (2, 2, &[2, 0][..]));
    /// assert_eq!(t.domain_sizes()[0].get(), 3);
    ///
    /// let err = Table::new(names.clone(), labels.clone(), vec![vec![3, 0]]).unwrap_err();
    /// assert!(matches!(err, TableError::Code { row: 0, attribute: 0, code: 3, k: 3 }));
    /// let err = Table::new(names, labels, vec![vec![1]]).unwrap_err();
    /// assert!(matches!(err, TableError::RowWidth { row: 0, width: 1, expected: 2 }));
    /// # Ok::<(), TableError>(())
    /// ```
    pub fn new(
        names: Vec<String>,
        labels: Vec<Vec<String>>,
        rows: Vec<Vec<u32>>,
    ) -> Result<Self, TableError> {
        let width = names.len();
        if let Some((row, r)) = rows.iter().enumerate().find(|(_, r)| r.len() != width) {
            return Err(TableError::RowWidth {
                row,
                width: r.len(),
                expected: width,
            });
        }
        Self::from_row_major(names, labels, rows.concat())
    }

    /// As [`Table::new`], with the rows laid end to end: row `i` is
    /// `codes[i * d..(i + 1) * d]` for `d = names.len()` attributes.
    ///
    /// ```
    /// use ldp_attack::data::Table;
    /// let names = vec!["a".to_string(), "b".to_string()];
    /// let labels = vec![vec!["0".to_string(), "1".to_string()]; 2];
    /// let t = Table::from_row_major(names.clone(), labels.clone(), vec![0, 1, 1, 1, 1, 0])?;
    /// assert_eq!(t.row(2), [1, 0]);
    /// assert!(Table::from_row_major(names, labels, vec![0, 1, 1]).is_err());
    /// # Ok::<(), ldp_attack::data::TableError>(())
    /// ```
    pub fn from_row_major(
        names: Vec<String>,
        labels: Vec<Vec<String>>,
        codes: Vec<u32>,
    ) -> Result<Self, TableError> {
        let domains = check_attributes(&names, &labels)?;
        let width = names.len();
        if codes.is_empty() {
            return Err(TableError::Empty);
        }
        if codes.len() % width != 0 {
            return Err(TableError::Ragged {
                codes: codes.len(),
                width,
            });
        }
        for (row, r) in codes.chunks_exact(width).enumerate() {
            for (attribute, (&code, k)) in r.iter().zip(&domains).enumerate() {
                if code >= k.get() {
                    return Err(TableError::Code {
                        row,
                        attribute,
                        code,
                        k: k.get(),
                    });
                }
            }
        }
        Ok(Self {
            names,
            labels,
            domains,
            codes,
        })
    }

    /// Reads a table from CSV text: a header line of attribute names, then one line per
    /// user of labels (fields are trimmed of surrounding whitespace). Each attribute's
    /// labels are the distinct values of its column, sorted, and coded `0..k` in that
    /// order, as scikit-learn's `LabelEncoder` codes a pandas column:
    ///
    /// - a column whose every value is a finite number (`17`, `-99999.0`, `2.5`) is
    ///   sorted by numeric value, as pandas reads it as numbers (ties between spellings
    ///   of one number, such as `1` and `1.0`, are distinct labels, ordered as strings);
    /// - any other column is sorted as strings (by Unicode code point, Python's order):
    ///   `10th` before `1st-4th` before `9th`.
    ///
    /// Every value is a label, so missing-value markers (`?`, empty fields) become labels
    /// of their own: drop such rows beforehand if they should not count.
    ///
    /// ```
    /// use ldp_attack::data::Table;
    /// let t = Table::from_csv_labels("age, grade\n9, 10th\n10, 9th\n9, 1st\n")?;
    /// assert_eq!(t.names(), ["age", "grade"]);
    /// assert_eq!(t.labels(0), ["9", "10"]); // numerically
    /// assert_eq!(t.labels(1), ["10th", "1st", "9th"]); // as strings
    /// assert_eq!(t.row(1), [1, 2]);
    /// assert!(Table::from_csv_labels("age\n9\n9\n").is_err()); // one label only
    /// # Ok::<(), ldp_attack::data::TableError>(())
    /// ```
    pub fn from_csv_labels(csv_text: &str) -> Result<Self, TableError> {
        let mut reader = csv::ReaderBuilder::new()
            .has_headers(true)
            .flexible(true)
            .trim(csv::Trim::All)
            .from_reader(csv_text.as_bytes());
        let names: Vec<String> = reader
            .headers()
            .map_err(|e| parse_error(&e))?
            .iter()
            .map(str::to_owned)
            .collect();
        let width = names.len();
        if width == 0 {
            return Err(TableError::NoAttributes);
        }
        // Codes in order of first appearance, remapped to sorted order at the end.
        let mut seen: Vec<HashMap<String, u32>> = vec![HashMap::new(); width];
        let mut codes = Vec::new();
        let mut record = csv::StringRecord::new();
        let mut row = 0;
        while reader
            .read_record(&mut record)
            .map_err(|e| parse_error(&e))?
        {
            if record.len() != width {
                return Err(TableError::Parse {
                    line: record.position().map_or(0, csv::Position::line),
                    reason: format!("{} fields, expected {width}", record.len()),
                });
            }
            for (field, seen) in record.iter().zip(&mut seen) {
                let code = match seen.get(field) {
                    Some(&code) => code,
                    None => {
                        let code = seen.len() as u32;
                        seen.insert(field.to_owned(), code);
                        code
                    }
                };
                codes.push(code);
            }
            row += 1;
        }
        if row == 0 {
            return Err(TableError::Empty);
        }
        let mut labels = Vec::with_capacity(width);
        let mut remaps = Vec::with_capacity(width);
        for seen in seen {
            let mut by_first: Vec<String> = vec![String::new(); seen.len()];
            for (label, code) in seen {
                by_first[code as usize] = label;
            }
            let order = sorted_order(&by_first);
            let mut remap = vec![0u32; order.len()];
            for (sorted, &first) in order.iter().enumerate() {
                remap[first] = sorted as u32;
            }
            labels.push(order.iter().map(|&i| by_first[i].clone()).collect());
            remaps.push(remap);
        }
        for r in codes.chunks_exact_mut(width) {
            for (code, remap) in r.iter_mut().zip(&remaps) {
                *code = remap[*code as usize];
            }
        }
        Self::from_row_major(names, labels, codes)
    }

    /// UCI Adult, ten categorical attributes of the 45,222 records without a missing
    /// value (of `adult.data` and `adult.test` together): `age` (k = 74, the ages 17 to
    /// 90), `workclass` (7), `education` (16), `marital-status` (7), `occupation` (14),
    /// `relationship` (6), `race` (5), `sex` (2), `native-country` (41) and `salary` (2),
    /// coded by sorted label as [`Table::from_csv_labels`] does (age numerically).
    ///
    /// Shipped with this crate (`data/adult.csv.gz`, `data/adult_labels.csv`; CC BY 4.0,
    /// Becker and Kohavi 1996); decoded on the first call, shared afterwards.
    ///
    /// ```
    /// use ldp_attack::data::Table;
    /// let k: Vec<u32> = Table::adult().domain_sizes().iter().map(|k| k.get()).collect();
    /// assert_eq!(k, [74, 7, 16, 7, 14, 6, 5, 2, 41, 2]);
    /// assert_eq!(Table::adult().labels(9), ["<=50K", ">50K"]);
    /// ```
    pub fn adult() -> &'static Self {
        static ADULT: OnceLock<Table> = OnceLock::new();
        ADULT.get_or_init(|| {
            Self::from_shipped(ADULT_CODES_GZ, ADULT_LABELS_CSV)
                .expect("the shipped Adult table is well formed")
        })
    }

    /// ACSEmployment (folktables, US Census ACS PUMS, Montana): 10,336 people, eighteen
    /// attributes `AGEP, SCHL, MAR, SEX, DIS, ESP, MIG, CIT, MIL, ANC, NATIVITY, RELP,
    /// DEAR, DEYE, DREM, RAC1P, GCL, ESR` with domain sizes
    /// `92, 25, 5, 2, 2, 9, 4, 5, 5, 4, 2, 18, 2, 2, 3, 9, 3, 6`, as used by Arcolezi et
    /// al. (PVLDB 2023). Labels are the Census codes as written in the source file
    /// (`-99999.0` marks "not applicable"), sorted numerically.
    ///
    /// Shipped with this crate (`data/acs_employment.csv.gz`,
    /// `data/acs_employment_labels.csv`); decoded on the first call, shared afterwards.
    ///
    /// ```
    /// use ldp_attack::data::Table;
    /// let acs = Table::acs_employment();
    /// assert_eq!((acs.len(), acs.dimensions()), (10_336, 18));
    /// let esr = acs.index_of("ESR").unwrap();
    /// assert_eq!(acs.labels(esr), ["-99999.0", "1.0", "2.0", "3.0", "4.0", "6.0"]);
    /// ```
    pub fn acs_employment() -> &'static Self {
        static ACS: OnceLock<Table> = OnceLock::new();
        ACS.get_or_init(|| {
            Self::from_shipped(ACS_EMPLOYMENT_CODES_GZ, ACS_EMPLOYMENT_LABELS_CSV)
                .expect("the shipped ACSEmployment table is well formed")
        })
    }

    /// Decodes a shipped table: gzip-compressed codes (a header of names, then rows of
    /// codes) and its labels (`attribute,code,label`, codes in order from 0).
    fn from_shipped(codes_gz: &[u8], labels_csv: &str) -> Result<Self, TableError> {
        let mut text = String::new();
        flate2::read::GzDecoder::new(codes_gz)
            .read_to_string(&mut text)
            .map_err(|e| TableError::Parse {
                line: 0,
                reason: format!("gzip: {e}"),
            })?;
        let mut reader = csv::ReaderBuilder::new()
            .has_headers(true)
            .from_reader(text.as_bytes());
        let names: Vec<String> = reader
            .headers()
            .map_err(|e| parse_error(&e))?
            .iter()
            .map(str::to_owned)
            .collect();
        let labels = parse_labels(labels_csv, &names)?;
        let mut codes = Vec::new();
        for record in reader.records() {
            let record = record.map_err(|e| parse_error(&e))?;
            for field in &record {
                codes.push(field.parse::<u32>().map_err(|e| TableError::Parse {
                    line: record.position().map_or(0, csv::Position::line),
                    reason: format!("code {field:?}: {e}"),
                })?);
            }
        }
        Self::from_row_major(names, labels, codes)
    }

    /// A table of the attributes `attributes` (in that order) of every row.
    ///
    /// ```
    /// use ldp_attack::data::Table;
    /// let adult = Table::adult();
    /// let t = adult.select(&[7, 0])?; // sex, age
    /// assert_eq!(t.names(), ["sex", "age"]);
    /// assert_eq!(t.row(5), [adult.row(5)[7], adult.row(5)[0]]);
    /// assert!(adult.select(&[10]).is_err());
    /// assert!(adult.select(&[]).is_err());
    /// # Ok::<(), ldp_attack::data::TableError>(())
    /// ```
    pub fn select(&self, attributes: &[usize]) -> Result<Self, TableError> {
        let d = self.dimensions();
        if let Some(&attribute) = attributes.iter().find(|&&j| j >= d) {
            return Err(TableError::NoSuchAttribute {
                attribute,
                dimensions: d,
            });
        }
        let names = attributes.iter().map(|&j| self.names[j].clone()).collect();
        let labels = attributes.iter().map(|&j| self.labels[j].clone()).collect();
        let codes = self
            .rows()
            .flat_map(|r| attributes.iter().map(move |&j| r[j]))
            .collect();
        Self::from_row_major(names, labels, codes)
    }

    /// Number of rows (users).
    pub fn len(&self) -> usize {
        self.codes.len() / self.names.len()
    }

    /// Whether there are no rows (never true for a constructed table).
    pub fn is_empty(&self) -> bool {
        self.codes.is_empty()
    }

    /// Number of attributes, `d`.
    pub fn dimensions(&self) -> usize {
        self.names.len()
    }

    /// The attributes' names.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// The index of the attribute named `name`, if any.
    ///
    /// ```
    /// use ldp_attack::data::Table;
    /// assert_eq!(Table::adult().index_of("race"), Some(6));
    /// assert_eq!(Table::adult().index_of("fnlwgt"), None);
    /// ```
    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.names.iter().position(|n| n == name)
    }

    /// Every attribute's domain size `k_j` (its number of labels).
    pub fn domain_sizes(&self) -> &[DomainSize] {
        &self.domains
    }

    /// Attribute `j`'s labels: code `c` stands for `labels(j)[c]`.
    ///
    /// # Panics
    ///
    /// If `j >= self.dimensions()`.
    pub fn labels(&self, j: usize) -> &[String] {
        &self.labels[j]
    }

    /// The label code `code` of attribute `j` stands for.
    ///
    /// ```
    /// use ldp_attack::data::Table;
    /// assert_eq!(Table::adult().label(0, 0), "17"); // the youngest age
    /// ```
    ///
    /// # Panics
    ///
    /// If `j` is not an attribute or `code` not in its domain.
    pub fn label(&self, j: usize, code: u32) -> &str {
        &self.labels[j][code as usize]
    }

    /// Row `i`: one code per attribute.
    ///
    /// # Panics
    ///
    /// If `i >= self.len()`.
    pub fn row(&self, i: usize) -> &[u32] {
        let d = self.dimensions();
        &self.codes[i * d..(i + 1) * d]
    }

    /// Every row, in order.
    pub fn rows(&self) -> impl ExactSizeIterator<Item = &[u32]> + '_ {
        self.codes.chunks_exact(self.dimensions())
    }

    /// Attribute `j`'s code in every row, in row order.
    ///
    /// ```
    /// use ldp_attack::data::Table;
    /// let sexes: Vec<u32> = Table::adult().column(7).collect();
    /// assert_eq!(sexes.len(), 45_222);
    /// ```
    ///
    /// # Panics
    ///
    /// If `j >= self.dimensions()`.
    pub fn column(&self, j: usize) -> impl ExactSizeIterator<Item = u32> + '_ {
        let d = self.dimensions();
        assert!(j < d, "attribute {j} does not exist: the table has {d}");
        self.codes[j..].iter().step_by(d).copied()
    }

    /// Number of rows holding each code of attribute `j`.
    ///
    /// # Panics
    ///
    /// If `j >= self.dimensions()`.
    pub fn counts(&self, j: usize) -> Vec<u64> {
        let mut c = vec![0u64; self.domains[j].as_usize()];
        self.column(j).for_each(|x| c[x as usize] += 1);
        c
    }

    /// True frequency of each code of attribute `j` (its marginal distribution).
    ///
    /// ```
    /// use ldp_attack::data::Table;
    /// let salary = Table::adult().frequencies(9);
    /// assert!((salary[1] - 11_208.0 / 45_222.0).abs() < 1e-12); // ">50K"
    /// ```
    ///
    /// # Panics
    ///
    /// If `j >= self.dimensions()`.
    pub fn frequencies(&self, j: usize) -> Vec<f64> {
        let n = self.len() as f64;
        self.counts(j).into_iter().map(|c| c as f64 / n).collect()
    }

    /// Every attribute's true frequencies, in attribute order (e.g. the priors of
    /// RS+RFD, `ldp_core::multidim::Priors::new`).
    pub fn marginals(&self) -> Vec<Vec<f64>> {
        (0..self.dimensions())
            .map(|j| self.frequencies(j))
            .collect()
    }

    /// Attribute `j` alone, as a [`Population`] over its domain.
    ///
    /// ```
    /// use ldp_attack::data::Table;
    /// let age = Table::adult().population(0);
    /// assert_eq!((age.len(), age.k().get()), (45_222, 74));
    /// ```
    ///
    /// # Panics
    ///
    /// If `j >= self.dimensions()`.
    pub fn population(&self, j: usize) -> Population {
        Population::from_items(self.domains[j], self.column(j).collect())
            .expect("a table's column is a valid, non-empty population")
    }
}

/// Checks the attributes of a table and returns their domain sizes.
fn check_attributes(
    names: &[String],
    labels: &[Vec<String>],
) -> Result<Vec<DomainSize>, TableError> {
    if names.is_empty() {
        return Err(TableError::NoAttributes);
    }
    if names.len() != labels.len() {
        return Err(TableError::Arity {
            names: names.len(),
            labels: labels.len(),
        });
    }
    let mut seen = HashMap::new();
    for name in names {
        if seen.insert(name.as_str(), ()).is_some() {
            return Err(TableError::DuplicateName { name: name.clone() });
        }
    }
    names
        .iter()
        .zip(labels)
        .enumerate()
        .map(|(attribute, (name, labels))| {
            let k = DomainSize::try_from(labels.len() as u64).map_err(|_| {
                TableError::TooFewLabels {
                    attribute,
                    name: name.clone(),
                    labels: labels.len(),
                }
            })?;
            let mut seen = HashMap::with_capacity(labels.len());
            for label in labels {
                if seen.insert(label.as_str(), ()).is_some() {
                    return Err(TableError::DuplicateLabel {
                        attribute,
                        name: name.clone(),
                        label: label.clone(),
                    });
                }
            }
            Ok(k)
        })
        .collect()
}

/// The order of `labels` after sorting: numerically if every label is a finite number,
/// else as strings.
fn sorted_order(labels: &[String]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..labels.len()).collect();
    let numbers: Option<Vec<f64>> = labels
        .iter()
        .map(|l| l.parse::<f64>().ok().filter(|x| x.is_finite()))
        .collect();
    match numbers {
        Some(x) => order.sort_by(|&a, &b| x[a].total_cmp(&x[b]).then(labels[a].cmp(&labels[b]))),
        None => order.sort_by(|&a, &b| labels[a].cmp(&labels[b])),
    }
    order
}

/// Reads a label list (`attribute,code,label`, each attribute's codes in order from 0,
/// attributes in the order of `names`).
fn parse_labels(csv_text: &str, names: &[String]) -> Result<Vec<Vec<String>>, TableError> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .from_reader(csv_text.as_bytes());
    let mut labels: Vec<Vec<String>> = vec![Vec::new(); names.len()];
    let mut attribute = 0;
    for record in reader.records() {
        let record = record.map_err(|e| parse_error(&e))?;
        let line = record.position().map_or(0, csv::Position::line);
        let bad = |reason: String| TableError::Parse { line, reason };
        let [name, code, label] = [0, 1, 2].map(|i| record.get(i).unwrap_or_default());
        while attribute < names.len() && names[attribute] != name {
            attribute += 1;
        }
        if attribute == names.len() {
            return Err(bad(format!(
                "attribute {name:?} is not in the header, or out of order"
            )));
        }
        let expected = labels[attribute].len();
        if code.parse::<usize>().ok() != Some(expected) {
            return Err(bad(format!("code {code:?}, expected {expected}")));
        }
        labels[attribute].push(label.to_owned());
    }
    Ok(labels)
}

fn parse_error(e: &csv::Error) -> TableError {
    TableError::Parse {
        line: e.position().map_or(0, csv::Position::line),
        reason: e.to_string(),
    }
}

/// The shipped Adult codes: gzip-compressed CSV, a header of the ten attribute names, then
/// one row of codes per record.
pub const ADULT_CODES_GZ: &[u8] = include_bytes!("../../data/adult.csv.gz");
/// The shipped Adult labels (`attribute,code,label`).
pub const ADULT_LABELS_CSV: &str = include_str!("../../data/adult_labels.csv");
/// The shipped ACSEmployment codes: gzip-compressed CSV, a header of the eighteen
/// attribute names, then one row of codes per person.
pub const ACS_EMPLOYMENT_CODES_GZ: &[u8] = include_bytes!("../../data/acs_employment.csv.gz");
/// The shipped ACSEmployment labels (`attribute,code,label`).
pub const ACS_EMPLOYMENT_LABELS_CSV: &str = include_str!("../../data/acs_employment_labels.csv");
