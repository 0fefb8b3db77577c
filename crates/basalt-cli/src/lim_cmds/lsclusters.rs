//! `lsclusters`: the cluster table and its `-l` form.

use super::*;

/// `lsclusters` (and `-l` with the extra lines).
pub fn lsclusters(config: &Config, info: Option<&ClusterInfoReply>, long: bool) -> String {
    let (status, master) = match info {
        Some(i) if !i.master.is_empty() => ("ok", i.master.as_str()),
        _ => ("unknown", "-"),
    };
    let admins = &config.cluster.admins;
    let admin = admins.first().map(String::as_str).unwrap_or("-");
    let hosts = config.cluster.hosts.len();
    let servers = config.cluster.hosts.iter().filter(|h| h.server).count();
    let mut out = format!(
        "{} {} {} {} {} {}\n",
        left_cut("CLUSTER_NAME", 14),
        left_cut("STATUS", 8),
        left_cut("MASTER_HOST", 15),
        right_cut("ADMIN", 15),
        right_cut("HOSTS", 8),
        right_cut("SERVERS", 8)
    );
    out.push_str(&format!(
        "{} {} {} {} {hosts:>8} {servers:>8}\n",
        left_cut(&config.cluster_name, 14),
        left_cut(status, 8),
        left_cut(master, 15),
        right_cut(admin, 15),
    ));
    if long {
        let resources: Vec<&str> = config
            .shared
            .resources
            .iter()
            .filter(|r| r.kind == ResourceKind::Boolean)
            .map(|r| r.name.as_str())
            .collect();
        let models: Vec<&str> = config
            .shared
            .host_models
            .iter()
            .map(|m| m.name.as_str())
            .collect();
        out.push_str(&format!(
            "Cluster administrators: {}\nAvailable resources: {}\nAvailable host types: {}\nAvailable host models: {}\n",
            admins.join(" "),
            resources.join(" "),
            config.shared.host_types.join(" "),
            models.join(" ")
        ));
    }
    out
}
