//! The shipped multi-attribute tables (UCI Adult, ACSEmployment) and the `Table` type.

use std::io::Write;

use ldp_attack::data::{Table, TableError};

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

fn domain_sizes(t: &Table) -> Vec<u32> {
    t.domain_sizes().iter().map(|k| k.get()).collect()
}

/// The table written back as labels: a header of names, then one line of labels per row,
/// each line ended by `eol`.
fn labels_text(t: &Table, eol: &str) -> String {
    let mut out = t.names().join(",") + eol;
    for row in t.rows() {
        let labels: Vec<&str> = row
            .iter()
            .enumerate()
            .map(|(j, &c)| t.label(j, c))
            .collect();
        out += &labels.join(",");
        out += eol;
    }
    out
}

/// 64-bit FNV-1a: a fingerprint of a text, to compare it with one computed elsewhere.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

const ADULT_NAMES: [&str; 10] = [
    "age",
    "workclass",
    "education",
    "marital-status",
    "occupation",
    "relationship",
    "race",
    "sex",
    "native-country",
    "salary",
];

#[test]
fn adult_has_the_anchors_shape() {
    let t = Table::adult();
    assert_eq!(t.len(), 45_222);
    assert_eq!(t.names(), ADULT_NAMES);
    assert_eq!(domain_sizes(t), [74, 7, 16, 7, 14, 6, 5, 2, 41, 2]);
    // Age: every age from 17 to 90 occurs, coded in numeric order.
    let ages: Vec<String> = (17..=90).map(|a: u32| a.to_string()).collect();
    assert_eq!(t.labels(0), ages);
    // Categories in string order, as LabelEncoder sorts them.
    assert_eq!(
        t.labels(2)[..4],
        strings(&["10th", "11th", "12th", "1st-4th"])
    );
    assert_eq!(t.labels(9), ["<=50K", ">50K"]); // the test file's "." is gone
    assert!(t.labels(4).iter().all(|l| l != "?"), "no missing values");
    assert_eq!(t.counts(9), [34_014, 11_208]);
    assert_eq!(t.counts(7), [14_695, 30_527]);
    // The first record of adult.data: 39, State-gov, Bachelors, Never-married, Adm-clerical,
    // Not-in-family, White, Male, United-States, <=50K.
    let first: Vec<&str> = t
        .row(0)
        .iter()
        .enumerate()
        .map(|(j, &c)| t.label(j, c))
        .collect();
    assert_eq!(
        first,
        [
            "39",
            "State-gov",
            "Bachelors",
            "Never-married",
            "Adm-clerical",
            "Not-in-family",
            "White",
            "Male",
            "United-States",
            "<=50K"
        ]
    );
}

#[test]
fn adult_decodes_to_the_cleaned_uci_records() {
    // The fingerprint of the cleaned records as labels (computed from the raw UCI files:
    // both files, rows with a '?' dropped, the ten columns, the test labels' '.' dropped,
    // fields comma-separated, '\n' after every line including the header): 4,185,730 bytes.
    let text = labels_text(Table::adult(), "\n");
    assert_eq!(text.len(), 4_185_730);
    assert_eq!(fnv1a(text.as_bytes()), 0xa10c_afcf_f0a9_9f18);
}

#[test]
fn shipped_adult_table_rederives_from_the_raw_uci_files() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/adult");
    let (Ok(train), Ok(test)) = (
        std::fs::read_to_string(dir.join("adult.data")),
        std::fs::read_to_string(dir.join("adult.test")),
    ) else {
        // Straight to the process's stderr, past the test harness's capture, so that the
        // skip shows in every test log.
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED shipped_adult_table_rederives_from_the_raw_uci_files: the raw UCI Adult \
             files are not at {}; the shipped table was not re-derived",
            dir.display()
        );
        return;
    };
    let (csv, records) = clean_adult(&[&train, &test]);
    assert_eq!(records, 48_842);
    let derived = Table::from_csv_labels(&csv).unwrap();
    assert_eq!(derived.len(), 45_222);
    assert_eq!(&derived, Table::adult());
}

/// The anchors' cleaning of UCI Adult, as CSV text of labels: both files' records (blank
/// lines and the test file's `|` header skipped), those with a missing value (`?`) dropped,
/// the ten categorical columns kept, the test file's trailing `.` of the salary dropped.
/// Returns the text and the number of records read.
fn clean_adult(files: &[&str]) -> (String, usize) {
    const KEEP: [usize; 10] = [0, 1, 3, 5, 6, 7, 8, 9, 13, 14];
    let mut csv = ADULT_NAMES.join(",") + "\n";
    let mut records = 0;
    for text in files {
        for line in text.lines().map(str::trim) {
            if line.is_empty() || line.starts_with('|') {
                continue;
            }
            records += 1;
            let fields: Vec<&str> = line.split(',').map(str::trim).collect();
            assert_eq!(fields.len(), 15, "{line}");
            if fields.contains(&"?") {
                continue;
            }
            let kept: Vec<&str> = KEEP
                .iter()
                .map(|&i| fields[i].trim_end_matches('.'))
                .collect();
            csv += &kept.join(",");
            csv += "\n";
        }
    }
    (csv, records)
}

const ACS_NAMES: [&str; 18] = [
    "AGEP", "SCHL", "MAR", "SEX", "DIS", "ESP", "MIG", "CIT", "MIL", "ANC", "NATIVITY", "RELP",
    "DEAR", "DEYE", "DREM", "RAC1P", "GCL", "ESR",
];

#[test]
fn acs_employment_has_the_anchors_shape() {
    let t = Table::acs_employment();
    assert_eq!(t.len(), 10_336);
    assert_eq!(t.dimensions(), 18);
    assert_eq!(t.names(), ACS_NAMES);
    assert_eq!(
        domain_sizes(t),
        [92, 25, 5, 2, 2, 9, 4, 5, 5, 4, 2, 18, 2, 2, 3, 9, 3, 6]
    );
    // Ages 0 to 94 but for 91, 92 and 93, in numeric (not string) order.
    let ages: Vec<String> = (0..=90).chain([94]).map(|a: u32| a.to_string()).collect();
    assert_eq!(t.labels(0), ages);
    let esr = t.index_of("ESR").unwrap();
    assert_eq!(
        t.labels(esr),
        ["-99999.0", "1.0", "2.0", "3.0", "4.0", "6.0"]
    );
    assert_eq!(t.counts(esr), [1_863, 4_707, 104, 172, 27, 3_463]);
}

#[test]
fn acs_employment_decodes_to_the_source_file_byte_for_byte() {
    // The fingerprint of `datasets/db_ACSEmployement.csv` of hharcolezi/risks-ldp (commit
    // 61dc53d1), 628,506 bytes with '\r\n' line ends: the shipped codes and labels give
    // back that file exactly.
    let text = labels_text(Table::acs_employment(), "\r\n");
    assert_eq!(text.len(), 628_506);
    assert_eq!(fnv1a(text.as_bytes()), 0xea76_1ef3_707f_3306);
}

#[test]
fn reading_a_shipped_table_back_from_its_labels_gives_it_again() {
    for t in [Table::adult(), Table::acs_employment()] {
        assert_eq!(&Table::from_csv_labels(&labels_text(t, "\n")).unwrap(), t);
    }
}

#[test]
fn shipped_tables_are_decoded_once() {
    assert!(std::ptr::eq(Table::adult(), Table::adult()));
    assert!(std::ptr::eq(
        Table::acs_employment(),
        Table::acs_employment()
    ));
}

#[test]
fn columns_counts_frequencies_and_populations_agree() {
    let t = Table::adult();
    for j in 0..t.dimensions() {
        let column: Vec<u32> = t.column(j).collect();
        assert_eq!(column.len(), t.len());
        assert!(column.iter().zip(t.rows()).all(|(&c, r)| c == r[j]));
        let counts = t.counts(j);
        assert_eq!(counts.len(), t.domain_sizes()[j].as_usize());
        assert!(counts.iter().all(|&c| c > 0), "every label occurs");
        let f = t.frequencies(j);
        assert!((f.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        assert_eq!(t.marginals()[j], f);
        let pop = t.population(j);
        assert_eq!((pop.k(), pop.counts()), (t.domain_sizes()[j], counts));
    }
}

#[test]
fn select_keeps_the_chosen_attributes_in_the_given_order() {
    let t = Table::acs_employment();
    let s = t.select(&[17, 3, 0]).unwrap();
    assert_eq!(s.names(), ["ESR", "SEX", "AGEP"]);
    assert_eq!(domain_sizes(&s), [6, 2, 92]);
    assert_eq!(s.labels(0), t.labels(17));
    assert_eq!(s.len(), t.len());
    for (r, full) in s.rows().zip(t.rows()) {
        assert_eq!(r, [full[17], full[3], full[0]]);
    }
    assert_eq!(
        t.select(&[18]),
        Err(TableError::NoSuchAttribute {
            attribute: 18,
            dimensions: 18
        })
    );
    assert_eq!(t.select(&[]), Err(TableError::NoAttributes));
    assert!(matches!(
        t.select(&[1, 1]),
        Err(TableError::DuplicateName { .. })
    ));
}

#[test]
fn new_rejects_malformed_tables() {
    let names = strings(&["a", "b"]);
    let labels = vec![strings(&["x", "y", "z"]), strings(&["0", "1"])];
    let ok = Table::new(names.clone(), labels.clone(), vec![vec![2, 1], vec![0, 0]]).unwrap();
    assert_eq!((ok.len(), ok.dimensions(), ok.row(1)), (2, 2, &[0, 0][..]));

    let err = |names: Vec<String>, labels: Vec<Vec<String>>, rows: Vec<Vec<u32>>| {
        Table::new(names, labels, rows).unwrap_err()
    };
    assert_eq!(
        err(names.clone(), labels.clone(), vec![vec![0, 0], vec![0]]),
        TableError::RowWidth {
            row: 1,
            width: 1,
            expected: 2
        }
    );
    assert_eq!(
        err(names.clone(), labels.clone(), vec![vec![0, 0], vec![1, 2]]),
        TableError::Code {
            row: 1,
            attribute: 1,
            code: 2,
            k: 2
        }
    );
    assert_eq!(
        err(names.clone(), labels.clone(), vec![]),
        TableError::Empty
    );
    assert_eq!(err(vec![], vec![], vec![vec![]]), TableError::NoAttributes);
    assert!(matches!(
        err(
            names.clone(),
            vec![labels[0].clone(), strings(&["only"])],
            vec![vec![0, 0]]
        ),
        TableError::TooFewLabels {
            attribute: 1,
            labels: 1,
            ..
        }
    ));
    assert!(matches!(
        err(
            names.clone(),
            vec![strings(&["x", "x"]), labels[1].clone()],
            vec![vec![0, 0]]
        ),
        TableError::DuplicateLabel { attribute: 0, .. }
    ));
    assert!(matches!(
        err(strings(&["a", "a"]), labels.clone(), vec![vec![0, 0]]),
        TableError::DuplicateName { .. }
    ));
    assert_eq!(
        err(names.clone(), labels[..1].to_vec(), vec![vec![0, 0]]),
        TableError::Arity {
            names: 2,
            labels: 1
        }
    );
    assert_eq!(
        Table::from_row_major(names, labels, vec![0, 0, 1]).unwrap_err(),
        TableError::Ragged { codes: 3, width: 2 }
    );
}

#[test]
fn csv_labels_are_coded_in_sorted_order() {
    let t = Table::from_csv_labels(
        "n, word, mixed\n\
         10, b, 3\n\
         -99999.0, a, x\n\
         2.5, c, 3\n\
         2.5, b, 10\n",
    )
    .unwrap();
    assert_eq!(t.names(), ["n", "word", "mixed"]);
    assert_eq!(t.labels(0), ["-99999.0", "2.5", "10"]); // numeric
    assert_eq!(t.labels(1), ["a", "b", "c"]);
    assert_eq!(t.labels(2), ["10", "3", "x"]); // not all numbers: as strings
    let rows: Vec<&[u32]> = t.rows().collect();
    assert_eq!(rows, [&[2, 1, 1][..], &[0, 0, 2], &[1, 2, 1], &[1, 1, 0]]);
    // Two spellings of one number stay two labels, in a fixed order.
    let t = Table::from_csv_labels("v\n1.0\n1\n0\n").unwrap();
    assert_eq!(t.labels(0), ["0", "1", "1.0"]);
    // Non-finite numbers are not numbers: the column sorts as strings.
    let t = Table::from_csv_labels("v\n10\n9\ninf\n").unwrap();
    assert_eq!(t.labels(0), ["10", "9", "inf"]);
}

#[test]
fn malformed_csv_is_rejected_with_its_line() {
    assert_eq!(Table::from_csv_labels(""), Err(TableError::NoAttributes));
    assert_eq!(Table::from_csv_labels("a,b\n"), Err(TableError::Empty));
    assert!(matches!(
        Table::from_csv_labels("a,b\nx,y\nx\n"),
        Err(TableError::Parse { line: 3, .. })
    ));
    assert!(matches!(
        Table::from_csv_labels("a,b\nx,y\nx,y\n"),
        Err(TableError::TooFewLabels { attribute: 0, .. })
    ));
    assert!(matches!(
        Table::from_csv_labels("a,a\nx,y\nz,w\n"),
        Err(TableError::DuplicateName { .. })
    ));
}

#[test]
fn a_table_round_trips_through_serde_and_is_validated_when_read() {
    let t = Table::adult().select(&[6, 7, 9]).unwrap();
    let json = serde_json::to_string(&t).unwrap();
    assert_eq!(serde_json::from_str::<Table>(&json).unwrap(), t);
    let bad = r#"{"names":["a"],"labels":[["x","y"]],"codes":[0,2]}"#;
    let err = serde_json::from_str::<Table>(bad).unwrap_err().to_string();
    assert!(err.contains("code 2 is outside 0..2"), "{err}");
}
