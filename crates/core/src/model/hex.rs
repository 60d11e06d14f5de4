//! JSON spelling of addresses: hex strings (`"0xffffffff82a51be0"`), because jq and
//! JavaScript read numbers as doubles and round integers above 2^53, which every
//! kernel address is. Used with `#[serde(serialize_with = "...")]` on address fields.

use serde::Serializer;
use serde::ser::SerializeStruct;

fn text(v: u64) -> String {
    format!("{v:#x}")
}

/// An address.
pub fn addr<S: Serializer>(v: &u64, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&text(*v))
}

/// An optional address (`null` when absent).
pub fn opt_addr<S: Serializer>(v: &Option<u64>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        Some(v) => s.serialize_str(&text(*v)),
        None => s.serialize_none(),
    }
}

/// The largest integer every JSON reader keeps exact (doubles: 2^53).
pub const EXACT: u64 = 1 << 53;

/// A value that is an address for some rules and a small offset for others (an
/// offender's offset, a line number): a number up to 2^53, a hex string above.
pub fn big<S: Serializer>(v: &u64, s: S) -> Result<S::Ok, S::Error> {
    if *v > EXACT {
        s.serialize_str(&text(*v))
    } else {
        s.serialize_u64(*v)
    }
}

/// A list of values spelled as `big` spells each.
pub fn big_list<S: Serializer>(v: &[u64], s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeSeq;
    let mut seq = s.serialize_seq(Some(v.len()))?;
    for x in v {
        if *x > EXACT {
            seq.serialize_element(&text(*x))?;
        } else {
            seq.serialize_element(x)?;
        }
    }
    seq.end()
}

/// Old and new address, as `{"old": "0x...", "new": "0x..."}`.
pub fn pair<S: Serializer>(old: u64, new: u64, s: S) -> Result<S::Ok, S::Error> {
    let mut st = s.serialize_struct("Pair", 2)?;
    st.serialize_field("old", &text(old))?;
    st.serialize_field("new", &text(new))?;
    st.end()
}

#[cfg(test)]
mod tests {
    #[test]
    fn addresses_are_hex_strings() {
        #[derive(serde::Serialize)]
        struct A {
            #[serde(serialize_with = "super::addr")]
            a: u64,
            #[serde(serialize_with = "super::opt_addr")]
            b: Option<u64>,
        }
        let json = serde_json::to_string(&A {
            a: 0xffff_ffff_82a5_1be0,
            b: None,
        })
        .unwrap();
        assert_eq!(json, r#"{"a":"0xffffffff82a51be0","b":null}"#);
    }
}
