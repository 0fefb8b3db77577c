//! Conversions between wire messages and `basalt-core` domain types.

use crate::common;
use basalt_core::{BUILTIN_INDICES, HostInfo, LoadIndex, LoadVector};

/// A load vector as wire values: built-ins in LSF order, then externals by name.
pub fn load_to_wire(load: &LoadVector) -> Vec<common::LoadValue> {
    let mut out: Vec<common::LoadValue> = BUILTIN_INDICES
        .iter()
        .filter_map(|i| {
            load.get(*i).map(|value| common::LoadValue {
                name: i.name().to_owned(),
                value,
            })
        })
        .collect();
    out.extend(load.external.iter().map(|(name, value)| common::LoadValue {
        name: name.clone(),
        value: *value,
    }));
    out
}

/// Wire values back into a load vector; non-finite values are dropped.
pub fn load_from_wire(values: &[common::LoadValue]) -> LoadVector {
    let mut load = LoadVector::default();
    for v in values.iter().filter(|v| v.value.is_finite()) {
        match LoadIndex::from_name(&v.name) {
            Some(i) => load.set(i, v.value),
            None => {
                load.external.insert(v.name.clone(), v.value);
            }
        }
    }
    load
}

pub fn host_info_to_wire(info: &HostInfo) -> common::HostInfo {
    common::HostInfo {
        name: info.name.clone(),
        host_type: info.host_type.clone(),
        model: info.model.clone(),
        cpu_factor: info.cpu_factor,
        ncpus: info.ncpus,
        max_mem_mb: info.max_mem_mb,
        max_swp_mb: info.max_swp_mb,
        max_tmp_mb: info.max_tmp_mb,
        server: info.server,
        resources: info.resources.clone(),
    }
}

pub fn host_info_from_wire(info: &common::HostInfo) -> HostInfo {
    HostInfo {
        name: info.name.clone(),
        host_type: info.host_type.clone(),
        model: info.model.clone(),
        cpu_factor: info.cpu_factor,
        ncpus: info.ncpus,
        max_mem_mb: info.max_mem_mb,
        max_swp_mb: info.max_swp_mb,
        max_tmp_mb: info.max_tmp_mb,
        server: info.server,
        resources: info.resources.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn load_round_trip() {
        let mut l = LoadVector::default();
        l.set(LoadIndex::Mem, 1024.0);
        l.external.insert("gpu".into(), 3.0);
        assert_eq!(load_from_wire(&load_to_wire(&l)), l);
    }
}
