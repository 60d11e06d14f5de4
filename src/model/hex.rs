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
