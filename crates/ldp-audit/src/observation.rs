//! Reports of any implementation, as the auditor reads them: four shapes, each with the
//! events it allows.

use ldp_core::families::local_hash::hash_item;
use rand::{Rng, RngExt};

/// The shape of an audited client's reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Shape {
    /// One item (GRR).
    Value,
    /// A set of items (SS; UE and THE as their one-bits).
    Set,
    /// A seed and a value in `0..g`: item v is supported when
    /// `XXH32(decimal(v), seed) mod g` equals the value, the hash of this toolkit and of
    /// pure-LDP and multi-freq-ldpy (BLH, OLH).
    Hashed {
        /// The hash range.
        g: u32,
    },
    /// k numbers: a noisy one-hot vector (SHE).
    Vector,
}

impl Shape {
    /// The shape's name on the command line: `grr`, `set`, `lh` or `vector`.
    pub fn name(self) -> &'static str {
        match self {
            Shape::Value => "grr",
            Shape::Set => "set",
            Shape::Hashed { .. } => "lh",
            Shape::Vector => "vector",
        }
    }
}

/// One report of an audited client.
#[derive(Debug, Clone, PartialEq)]
pub enum Observation {
    /// [`Shape::Value`].
    Value(u32),
    /// [`Shape::Set`]: distinct items, in the order the client wrote them.
    Set(Vec<u32>),
    /// [`Shape::Hashed`].
    Hashed {
        /// The hash seed.
        seed: u32,
        /// The reported hash value.
        y: u32,
    },
    /// [`Shape::Vector`].
    Vector(Vec<f64>),
}

impl Observation {
    /// Checks that the observation has `shape` and lies in its output space for domain
    /// size `k`. The message names what is wrong.
    pub fn check(mut self, shape: Shape, k: u32) -> Result<Self, String> {
        check_setting(shape, k)?;
        match (&mut self, shape) {
            (Observation::Value(y), Shape::Value) if *y >= k => {
                return Err(format!("the item {y} is outside the domain 0 to {}", k - 1));
            }
            (Observation::Value(_), Shape::Value) => {}
            (Observation::Set(items), Shape::Set) => {
                let mut sorted = items.clone();
                sorted.sort_unstable();
                if let Some(w) = sorted.windows(2).find(|w| w[0] == w[1]) {
                    return Err(format!("the item {} appears twice", w[0]));
                }
                if let Some(&last) = sorted.last().filter(|&&l| l >= k) {
                    return Err(format!(
                        "the item {last} is outside the domain 0 to {}",
                        k - 1
                    ));
                }
            }
            (Observation::Hashed { y, .. }, Shape::Hashed { g }) if *y >= g => {
                return Err(format!("the hash value {y} is outside 0 to {}", g - 1));
            }
            (Observation::Hashed { .. }, Shape::Hashed { .. }) => {}
            (Observation::Vector(v), Shape::Vector) => {
                if v.len() != k as usize {
                    return Err(format!("{} numbers where k = {k} were expected", v.len()));
                }
                if let Some(x) = v.iter().find(|x| !x.is_finite()) {
                    return Err(format!("the number {x} is not finite"));
                }
            }
            (_, shape) => {
                return Err(format!("not a report of shape {}", shape.name()));
            }
        }
        Ok(self)
    }

    /// The likelihood-ratio event for `(v1, v2)`
    /// ([`Statistic::LikelihoodRatio`](crate::Statistic::LikelihoodRatio)). The
    /// observation must have passed [`Observation::check`] for `shape`.
    pub fn separates(&self, shape: Shape, v1: u32, v2: u32) -> bool {
        match (self, shape) {
            (Observation::Value(y), _) => *y == v1,
            (Observation::Set(items), _) => items.contains(&v1) && !items.contains(&v2),
            (&Observation::Hashed { seed, y }, Shape::Hashed { g }) => {
                hash_item(v1, seed, g) == y && hash_item(v2, seed, g) != y
            }
            (Observation::Vector(v), _) => v[v1 as usize] >= 1.0 && v[v2 as usize] <= 0.0,
            (Observation::Hashed { .. }, _) => false,
        }
    }

    /// Whether the report shows `statistic`'s event for `(v1, v2)` (the guess excepted:
    /// see [`Observation::guess`]).
    pub fn shows(&self, statistic: crate::Statistic, shape: Shape, v1: u32, v2: u32) -> bool {
        match (statistic, self) {
            (crate::Statistic::FirstListed, Observation::Set(items)) => {
                items.first() == Some(&v1) && !items.contains(&v2)
            }
            _ => self.separates(shape, v1, v2),
        }
    }

    /// The reconstruction attacker's guess among `0..k`
    /// ([`Statistic::AttackGuess`](crate::Statistic::AttackGuess)).
    pub fn guess<R: Rng + ?Sized>(&self, shape: Shape, k: u32, rng: &mut R) -> u32 {
        let pick = |items: &[u32], rng: &mut R| {
            if items.is_empty() {
                rng.random_range(0..k)
            } else {
                items[rng.random_range(0..items.len())]
            }
        };
        match (self, shape) {
            (Observation::Value(y), _) => *y,
            (Observation::Set(items), _) => pick(items, rng),
            (&Observation::Hashed { seed, y }, Shape::Hashed { g }) => {
                let supported: Vec<u32> = (0..k).filter(|&v| hash_item(v, seed, g) == y).collect();
                pick(&supported, rng)
            }
            (Observation::Vector(v), _) => {
                let mut best = 0;
                for (i, &x) in v.iter().enumerate() {
                    if x > v[best] {
                        best = i;
                    }
                }
                best as u32
            }
            (Observation::Hashed { .. }, _) => rng.random_range(0..k),
        }
    }
}

/// A domain of at least one item, and a hash range of at least 2.
fn check_setting(shape: Shape, k: u32) -> Result<(), String> {
    if k == 0 {
        return Err("k = 0: a domain holds at least one item".into());
    }
    if let Shape::Hashed { g } = shape
        && g < 2
    {
        return Err(format!("g = {g}: a hash range holds at least 2 values"));
    }
    Ok(())
}

/// Reads one line of an external client's output as a report of `shape`, in this
/// toolkit's JSON-lines form (`{"y": 3}`, `{"subset": [..]}` or `{"ones": [..]}`,
/// `{"seed": 7, "y": 1}`, `{"y": [0.1, ..]}`) or a plain form: an integer (`value`), a
/// string of k 0/1 digits, optionally separated by spaces or commas (`set`: digit i is
/// item i), `seed,y` (`lh`), or k numbers separated by spaces or commas (`vector`).
pub fn parse_line(line: &str, shape: Shape, k: u32) -> Result<Observation, String> {
    check_setting(shape, k)?;
    let line = line.trim();
    if line.is_empty() {
        return Err("an empty line".into());
    }
    let observation = if line.starts_with('{') {
        parse_json(line, shape)?
    } else {
        parse_plain(line, shape, k)?
    };
    observation.check(shape, k)
}

fn parse_json(line: &str, shape: Shape) -> Result<Observation, String> {
    let value: serde_json::Value =
        serde_json::from_str(line).map_err(|e| format!("not JSON: {e}"))?;
    let object = value.as_object().ok_or("not a JSON object")?;
    let whole = |key: &str| -> Result<u32, String> {
        let v = object.get(key).ok_or_else(|| format!("no field {key:?}"))?;
        v.as_u64()
            .and_then(|n| u32::try_from(n).ok())
            .ok_or_else(|| format!("{key:?} is {v}, not a whole number below 2^32"))
    };
    Ok(match shape {
        Shape::Value => Observation::Value(whole("y")?),
        Shape::Hashed { .. } => Observation::Hashed {
            seed: whole("seed")?,
            y: whole("y")?,
        },
        Shape::Set => {
            let list = object
                .get("subset")
                .or_else(|| object.get("ones"))
                .and_then(|v| v.as_array())
                .ok_or("no list \"subset\" or \"ones\"")?;
            let items = list
                .iter()
                .map(|v| {
                    v.as_u64()
                        .and_then(|n| u32::try_from(n).ok())
                        .ok_or_else(|| format!("the entry {v} is not an item"))
                })
                .collect::<Result<Vec<_>, _>>()?;
            Observation::Set(items)
        }
        Shape::Vector => {
            let list = object
                .get("y")
                .and_then(|v| v.as_array())
                .ok_or("no list \"y\"")?;
            let numbers = list
                .iter()
                .map(|v| {
                    v.as_f64()
                        .ok_or_else(|| format!("the entry {v} is not a number"))
                })
                .collect::<Result<Vec<_>, _>>()?;
            Observation::Vector(numbers)
        }
    })
}

fn parse_plain(line: &str, shape: Shape, k: u32) -> Result<Observation, String> {
    let fields = || line.split([',', ' ', '\t']).filter(|f| !f.is_empty());
    let whole = |f: &str| {
        f.parse::<u32>()
            .map_err(|_| format!("{f:?} is not a whole number below 2^32"))
    };
    Ok(match shape {
        Shape::Value => Observation::Value(whole(line)?),
        Shape::Hashed { .. } => {
            let parts: Vec<&str> = fields().collect();
            let [seed, y] = parts[..] else {
                return Err(format!(
                    "{} fields where \"seed,y\" was expected",
                    parts.len()
                ));
            };
            Observation::Hashed {
                seed: whole(seed)?,
                y: whole(y)?,
            }
        }
        Shape::Set => {
            let bits: Vec<char> = fields().flat_map(str::chars).collect();
            if bits.len() != k as usize {
                return Err(format!(
                    "{} digits where k = {k} 0/1 digits were expected",
                    bits.len()
                ));
            }
            let mut items = Vec::new();
            for (i, c) in bits.into_iter().enumerate() {
                match c {
                    '1' => items.push(i as u32),
                    '0' => {}
                    other => return Err(format!("{other:?} is not a 0/1 digit")),
                }
            }
            Observation::Set(items)
        }
        Shape::Vector => Observation::Vector(
            fields()
                .map(|f| {
                    f.parse::<f64>()
                        .map_err(|_| format!("{f:?} is not a number"))
                })
                .collect::<Result<Vec<_>, _>>()?,
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_documented_form_reads() {
        let hashed = Shape::Hashed { g: 5 };
        assert_eq!(parse_line("3", Shape::Value, 5), Ok(Observation::Value(3)));
        assert_eq!(
            parse_line(r#"{"y": 3}"#, Shape::Value, 5),
            Ok(Observation::Value(3))
        );
        assert_eq!(
            parse_line("01001", Shape::Set, 5),
            Ok(Observation::Set(vec![1, 4]))
        );
        assert_eq!(
            parse_line("0 1 0 0 1", Shape::Set, 5),
            Ok(Observation::Set(vec![1, 4]))
        );
        assert_eq!(
            parse_line(r#"{"subset": [4, 1]}"#, Shape::Set, 5),
            Ok(Observation::Set(vec![4, 1]))
        );
        assert_eq!(
            parse_line(r#"{"ones": []}"#, Shape::Set, 5),
            Ok(Observation::Set(vec![]))
        );
        assert_eq!(
            parse_line("77,2", hashed, 5),
            Ok(Observation::Hashed { seed: 77, y: 2 })
        );
        assert_eq!(
            parse_line(r#"{"seed": 77, "y": 2}"#, hashed, 5),
            Ok(Observation::Hashed { seed: 77, y: 2 })
        );
        assert_eq!(
            parse_line("1.5, -2, 0, 0, 3e-1", Shape::Vector, 5),
            Ok(Observation::Vector(vec![1.5, -2.0, 0.0, 0.0, 0.3]))
        );
    }

    #[test]
    fn malformed_lines_say_what_is_wrong() {
        let err = |line: &str, shape| parse_line(line, shape, 5).unwrap_err();
        assert!(err("5", Shape::Value).contains("outside the domain 0 to 4"));
        assert!(err("-1", Shape::Value).contains("not a whole number"));
        assert!(err("", Shape::Value).contains("empty"));
        assert!(err("0101", Shape::Set).contains("4 digits where k = 5"));
        assert!(err("01201", Shape::Set).contains("'2' is not a 0/1 digit"));
        assert!(err(r#"{"subset": [1, 1]}"#, Shape::Set).contains("appears twice"));
        assert!(err("3", Shape::Hashed { g: 2 }).contains("1 fields"));
        assert!(err("3,2", Shape::Hashed { g: 2 }).contains("hash value 2 is outside 0 to 1"));
        assert!(err("1 2 3", Shape::Vector).contains("3 numbers where k = 5"));
        assert!(err("1 2 3 nan 4", Shape::Vector).contains("not finite"));
        assert!(err("{\"y\": 3", Shape::Value).contains("not JSON"));
    }

    #[test]
    fn events_follow_the_shapes() {
        let set = Observation::Set(vec![0, 3]);
        assert!(set.separates(Shape::Set, 0, 1));
        assert!(!set.separates(Shape::Set, 0, 3));
        let v = Observation::Vector(vec![1.2, -0.1, 0.5]);
        assert!(v.separates(Shape::Vector, 0, 1));
        assert!(!v.separates(Shape::Vector, 0, 2));
        let g = 4;
        let seed = 99;
        let y = hash_item(2, seed, g);
        let other = (0..10).find(|&x| hash_item(x, seed, g) != y).unwrap();
        let h = Observation::Hashed { seed, y };
        assert!(h.separates(Shape::Hashed { g }, 2, other));
        assert!(!h.separates(Shape::Hashed { g }, other, 2));
    }
}
