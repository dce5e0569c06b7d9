//! Whose process is at the other end of a loopback connection to the catcher
//! (docs/connect.md#security): on Linux, the kernel lists every TCP socket with the user that
//! owns it (`/proc/net/tcp`, `/proc/net/tcp6`), so the catcher can refuse a connection that
//! another local user's process opened, whatever that process has learned of its address.
//!
//! Allowed are the catcher's own user and root: root can read the program's memory anyway, and
//! is who relays a connection in some setups (a container's port proxy, WSL's localhost relay).
//! Where the system shows no socket owners (not Linux, or no `/proc`), nothing is checked.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// What the owner check decided for one connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Peer {
    /// A process of the catcher's user, or of root.
    Allowed,
    /// A process of another user, or one that could not be found in the kernel's table.
    Refused,
    /// The system shows no socket owners: nothing was checked.
    Unchecked,
}

/// Whether the process that opened the connection from `peer` to `local` may talk to the catcher.
pub fn check(local: SocketAddr, peer: SocketAddr) -> Peer {
    if !cfg!(target_os = "linux") {
        return Peer::Unchecked;
    }
    let tables: Vec<String> =
        ["/proc/net/tcp", "/proc/net/tcp6"].iter().filter_map(|path| std::fs::read_to_string(path).ok()).collect();
    if tables.is_empty() {
        return Peer::Unchecked;
    }
    decide(tables.iter().map(String::as_str), local, peer)
}

/// The decision over the kernel's tables: the peer's socket is the one whose local end is `peer`
/// and remote end `local`; the catcher's own accepted socket the reverse, owned by its user.
fn decide<'a>(tables: impl Iterator<Item = &'a str> + Clone, local: SocketAddr, peer: SocketAddr) -> Peer {
    let owner = |from: SocketAddr, to: SocketAddr| {
        tables.clone().flat_map(str::lines).filter_map(entry).find(|e| e.local == from && e.remote == to).map(|e| e.uid)
    };
    match (owner(local, peer), owner(peer, local)) {
        (Some(ours), Some(theirs)) if theirs == ours || theirs == 0 => Peer::Allowed,
        _ => Peer::Refused,
    }
}

/// One socket of a table: its two ends and the user that owns it.
struct Entry {
    local: SocketAddr,
    remote: SocketAddr,
    uid: u32,
}

/// A line of `/proc/net/tcp` or `/proc/net/tcp6`: `sl local remote st queues timer retransmits
/// uid ...`, an address written as hexadecimal words in the machine's byte order, then `:port`.
fn entry(line: &str) -> Option<Entry> {
    let fields: Vec<&str> = line.split_whitespace().collect();
    let (local, remote, uid) = (fields.get(1)?, fields.get(2)?, fields.get(7)?);
    Some(Entry { local: address(local)?, remote: address(remote)?, uid: uid.parse().ok()? })
}

fn address(text: &str) -> Option<SocketAddr> {
    let (host, port) = text.split_once(':')?;
    let port = u16::from_str_radix(port, 16).ok()?;
    let mut bytes = Vec::with_capacity(16);
    for word in host.as_bytes().chunks(8) {
        let word = u32::from_str_radix(std::str::from_utf8(word).ok()?, 16).ok()?;
        bytes.extend_from_slice(&word.to_ne_bytes());
    }
    let ip = match bytes.len() {
        4 => IpAddr::V4(Ipv4Addr::from(<[u8; 4]>::try_from(bytes).ok()?)),
        // A socket of the IPv6 family that reached 127.0.0.1 shows it as ::ffff:127.0.0.1.
        16 => {
            let v6 = Ipv6Addr::from(<[u8; 16]>::try_from(bytes).ok()?);
            v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4)
        }
        _ => return None,
    };
    Some(SocketAddr::new(ip, port))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 127.0.0.1 as the kernel writes it: one word, in the machine's byte order.
    fn loopback() -> String {
        format!("{:08X}", u32::from_ne_bytes([127, 0, 0, 1]))
    }

    fn line(local_port: u16, remote_port: u16, uid: u32) -> String {
        let ip = loopback();
        format!(
            "   3: {ip}:{local_port:04X} {ip}:{remote_port:04X} 01 00000000:00000000 00:00000000 00000000 {uid:>5}        0 41 1 0000000000000000 20 4 30 10 -1"
        )
    }

    fn at(port: u16) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], port))
    }

    const HEADER: &str =
        "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode";

    #[test]
    fn a_peer_of_the_same_user_or_root_is_allowed_another_user_refused() {
        for (theirs, expected) in [(1000, Peer::Allowed), (0, Peer::Allowed), (1001, Peer::Refused)] {
            let table = [HEADER.to_owned(), line(40000, 51000, 1000), line(51000, 40000, theirs)].join("\n");
            assert_eq!(decide([table.as_str()].into_iter(), at(40000), at(51000)), expected, "uid {theirs}");
        }
    }

    #[test]
    fn a_peer_missing_from_the_tables_is_refused() {
        let table = [HEADER.to_owned(), line(40000, 51000, 1000), line(51000, 40001, 1000)].join("\n");
        assert_eq!(decide([table.as_str()].into_iter(), at(40000), at(51000)), Peer::Refused);
    }

    #[test]
    fn an_ipv6_socket_reaching_loopback_is_read_as_ipv4() {
        let words = [[0u8, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0xff, 0xff], [127, 0, 0, 1]];
        let mapped = words.map(|word| format!("{:08X}", u32::from_ne_bytes(word))).concat();
        let v4 = [HEADER.to_owned(), line(40000, 51000, 1000)].join("\n");
        let v6 = format!(
            "{HEADER}\n   0: {mapped}:C738 {mapped}:9C40 01 00000000:00000000 00:00000000 00000000  1002        0 7 1"
        );
        assert_eq!(decide([v4.as_str(), v6.as_str()].into_iter(), at(40000), at(51000)), Peer::Refused);
        let v6 = v6.replace(" 1002 ", " 1000 ");
        assert_eq!(decide([v4.as_str(), v6.as_str()].into_iter(), at(40000), at(51000)), Peer::Allowed);
    }

    #[test]
    fn this_process_is_its_own_user() {
        // A real connection of this test to itself: the kernel's table names one user at both ends.
        let listener = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap();
        let client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (server, peer) = listener.accept().unwrap();
        let expected = if cfg!(target_os = "linux") { Peer::Allowed } else { Peer::Unchecked };
        assert_eq!(check(server.local_addr().unwrap(), peer), expected);
        drop(client);
    }
}
