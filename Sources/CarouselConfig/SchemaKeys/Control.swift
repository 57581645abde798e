extension Schema {
    /// The keys of `[control]`, in the order the shipped INI, the README's table and carouseld.ini(5) list them.
    static let controlKeys: [KeySpec] = [
        .text("control", "socket", "an absolute path", default: "/run/carouseld/control.sock", help: """
            The control socket `carouselctl` and other clients connect to.
            """) { c, v throws(ValueError) in
            guard v.hasPrefix("/"), v.utf8.count < 108 else { throw ValueError("expected an absolute path shorter than 108 bytes") }
            c.control.socket = v
        },
        .text("control", "mode", "octal permissions such as 0660", default: "0660", help: """
            The socket's permissions.
            """) { c, v throws(ValueError) in
            guard let m = UInt32(v, radix: 8), m <= 0o777 else { throw ValueError("expected octal permissions such as 0660") }
            c.control.mode = m
        },
        .text("control", "group", "a group name or empty", default: "", help: """
            The socket's owner group; empty: the daemon's.
            """) { c, v throws(ValueError) in c.control.group = v.isEmpty ? nil : v },
        .text("control", "allow_uids", "comma-separated uids or empty", default: "", help: """
            Numeric user ids allowed to connect, separated by commas. With `allow_uids` and `allow_gids` both empty,
            anyone who can open the socket may; root is not special (list uid 0 to let it in).
            """) { c, v throws(ValueError) in c.control.allowUIDs = try idList(v) },
        .text("control", "allow_gids", "comma-separated gids or empty", default: "", help: """
            Numeric group ids allowed to connect, separated by commas; a group counts as a client's primary or
            supplementary group.
            """) { c, v throws(ValueError) in c.control.allowGIDs = try idList(v) },
        .integer("control", "max_clients", 1...1024, default: "16", help: """
            Connections at once; one user other than root may hold half of them.
            """) { $0.control.maxClients = $1 },
        .text("control", "settings", "an absolute path or empty (none)", default: "/var/lib/carouseld/settings.ini", help: """
            The frame's settings file: what `keep` (and the web page's Settings) changed, read after this file and the
            drop-ins in carouseld.ini.d/, so that it wins over both; `forget` takes a key out of it again. The daemon
            writes it (in its state directory); it never holds a key that needs administer. This file itself is never
            rewritten. Empty: none, and `keep` is refused.
            """) { c, v throws(ValueError) in
            guard v.isEmpty || v.hasPrefix("/") else { throw ValueError("expected an absolute path or empty") }
            c.control.settings = v.isEmpty ? nil : v
        },
    ]
}
