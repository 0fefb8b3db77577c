//! `lsid`: the product line, the cluster name and the master host.

use super::*;

/// `lsid`.
pub fn lsid(info: &ClusterInfoReply) -> String {
    format!(
        "{}\n\nMy cluster name is {}\nMy master name is {}\n",
        basalt_core::version::product_line(),
        info.cluster,
        info.master
    )
}
