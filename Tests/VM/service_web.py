"""The frame's page under systemd, for service_e2e.py: carouseld-web.socket
on port 80 (PID 1's), its proxy and carouseld-web.service, installed by
install.sh from the dist bundle and enabled as README.md says.

Checked: nothing of the page runs until someone opens it; the page answers
a browser on the host through QEMU's forwarded port (the guest sees the
host as 10.0.2.2, a private address); a peer from a public address is
refused by the socket's IPAddressAllow=; the owner's password set with
`sudo carouseld-web set-password` is the page's to read; an upload lands in
the pictures folder as carouseld-web:carouseld 0640 and in the daemon's
list; a tap on Next moves the frame (the daemon's grant for the web user);
and each process runs as carouseld-web with no network of its own.

Then HTTPS (web_over_https): a certificate of the test CA and its key
installed as README.md says, carouseld-web-https.socket on port 443; the
page answers the host over TLS, verified, and port 80 sends it there."""

import http.client
import json
import os
import shlex
import socket
import sys
import time
import urllib.parse

# The test CA and the HTTPS requests of the page's own suite.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "Servers"))
import web_https  # noqa: E402

# QEMU's user network (slirp), isolated from the host's (restrict=on): the
# guest at 10.0.2.15, port 80 forwarded from a port on the host's loopback.
GUEST_ADDRESS = "10.0.2.15"
PASSWORD = "a frame on the wall"
WEB_UNITS = ("carouseld-web.service", "carouseld-web-proxy@http.service")
# Port 443's proxy, started by carouseld-web-https.socket.
HTTPS_PROXY = "carouseld-web-proxy@https.service"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def qemu_network(port, https_port):
    """QEMU arguments: a virtio NIC whose ports 80 and 443 are the host's `port` and `https_port`."""
    return ["-netdev", f"user,id=net0,restrict=on,hostfwd=tcp:127.0.0.1:{port}-{GUEST_ADDRESS}:80,"
            f"hostfwd=tcp:127.0.0.1:{https_port}-{GUEST_ADDRESS}:443", "-device", "virtio-net-pci,netdev=net0"]


# Run in the guest: an IPv4 address on an interface, up (the image has no
# iproute2; these are the ioctls ifconfig makes).
SET_ADDRESS = r"""
import fcntl, socket, struct, sys
name, address, mask = sys.argv[1], sys.argv[2], sys.argv[3]
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
def ifreq_addr(a):
    return struct.pack("16sH2s4s8s", name.encode(), socket.AF_INET, b"\0\0", socket.inet_aton(a), b"\0" * 8)
fcntl.ioctl(s, 0x8916, ifreq_addr(address))  # SIOCSIFADDR
fcntl.ioctl(s, 0x891C, ifreq_addr(mask))     # SIOCSIFNETMASK
flags = struct.unpack("16sH", fcntl.ioctl(s, 0x8913, struct.pack("16sH", name.encode(), 0))[:18])[1]  # SIOCGIFFLAGS
fcntl.ioctl(s, 0x8914, struct.pack("16sH", name.encode(), flags | 0x1))  # SIOCSIFFLAGS, IFF_UP
"""

# Run in the guest: connect to port 80 (or the port given) from `source`;
# prints what came of it: the page's first bytes on 80, the TLS version on 443.
CONNECT_FROM = r"""
import socket, ssl, sys
port = int(sys.argv[2]) if len(sys.argv) > 2 else 80
s = socket.socket()
s.settimeout(5)
s.bind((sys.argv[1], 0))
try:
    s.connect((sys.argv[1], port))
    if port == 443:
        context = ssl.create_default_context()
        context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
        print("answered", context.wrap_socket(s).version())
    else:
        s.sendall(b"GET /login HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        print("answered", s.recv(64)[:12].decode(errors="replace"))
except OSError as e:
    print("refused", type(e).__name__, e)
"""


class Page:
    """HTTP to the page from the host, as a browser there would send it."""

    def __init__(self, port):
        self.port = port
        self.origin = f"http://127.0.0.1:{port}"

    def request(self, method, path, body=None, headers=None, cookie=None):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        h = dict(headers or {})
        if method not in ("GET", "HEAD"):
            h["Origin"] = self.origin
        if cookie:
            h["Cookie"] = cookie
        c.request(method, path, body=body, headers=h)
        r = c.getresponse()
        data = r.read()
        c.close()
        return r.status, dict((k.lower(), v) for k, v in r.getheaders()), data


def web_through_the_sandbox(s, readme, port, failure, picture):
    """The check; `picture` is a small JPEG's bytes to upload."""
    Failure = failure
    nic = [n for n in s.ok("ls /sys/class/net").split() if n != "lo"]
    if len(nic) != 1:
        raise Failure(f"expected one network interface besides lo: {nic}")
    s.ok(f"python3 -c {quote(SET_ADDRESS)} {nic[0]} {GUEST_ADDRESS} 255.255.255.0")
    s.ok(readme("sudo systemctl enable --now carouseld-web.socket"), timeout=120)
    listen = s.ok("systemctl show carouseld-web.socket -p Listen --value").strip()
    if ":80 " not in listen + " ":
        raise Failure(f"carouseld-web.socket listens on {listen!r}, not port 80")
    # Costs nothing until the page is opened.
    idle = s.sh("systemctl is-active " + " ".join(WEB_UNITS)).out.split()
    if idle != ["inactive", "inactive"]:
        raise Failure(f"before anyone opened the page: {dict(zip(WEB_UNITS, idle))}")

    # The owner's password, as the README says (as root: the file is the page's user's).
    s.ok(f"echo {quote(PASSWORD)} | " + readme("sudo carouseld-web set-password"))
    owner = s.ok("stat -c '%U:%G %a' /var/lib/carouseld-web/owner.bcrypt").strip()
    if owner != "carouseld-web:carouseld-web 600":
        raise Failure(f"the password file is {owner}")

    # From the host: the first connection starts the proxy and the page.
    page = Page(port)
    t0 = time.monotonic()
    status, headers, body = page.request("GET", "/login")
    first = time.monotonic() - t0
    if status != 200 or b"password" not in body.lower():
        raise Failure(f"GET /login from the host answered {status}: {body[:200]!r}")
    s.figures["web: first page through socket activation s (TCG)"] = round(first, 1)
    active = s.ok("systemctl is-active " + " ".join(WEB_UNITS)).split()
    if active != ["active", "active"]:
        raise Failure(f"after the first request: {dict(zip(WEB_UNITS, active))}")
    status, headers, _ = page.request("POST", "/login", body=urllib.parse.urlencode({"password": PASSWORD}),
                                      headers={"Content-Type": "application/x-www-form-urlencoded"})
    if status != 303 or "set-cookie" not in headers:
        raise Failure(f"signing in from the host answered {status}")
    cookie = headers["set-cookie"].split(";")[0]

    # Both processes: the page's user, no network of their own.
    for unit in WEB_UNITS:
        pid = s.ok(f"systemctl show {unit} -p MainPID --value").strip()
        uid = s.ok(f"awk '/^Uid:/ {{ print $2 }}' /proc/{pid}/status").split()[0]
        if uid != s.ok("id -u carouseld-web").strip():
            raise Failure(f"{unit} runs as uid {uid}")
        # /proc/net is the reading process's network namespace (sysfs would be the host's).
        links = [l.split(":")[0].strip() for l in s.ok(f"nsenter -t {pid} -n cat /proc/net/dev").splitlines()[2:]]
        if links != ["lo"]:
            raise Failure(f"{unit} sees the network interfaces {links}")

    # An upload: in the folder as the page's user, read by the daemon through the group.
    before = s.status()["count"]
    boundary = "----carouseld-vm-boundary"
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"files\"; filename=\"from-a-phone.jpg\"\r\n"
            f"Content-Type: image/jpeg\r\n\r\n").encode() + picture + f"\r\n--{boundary}--\r\n".encode()
    status, _, answer = page.request("POST", "/photos", body=body, cookie=cookie,
                                     headers={"Content-Type": f"multipart/form-data; boundary={boundary}",
                                              "Accept": "application/json"})
    if status != 200 or not all(f["ok"] for f in json.loads(answer)["files"]):
        raise Failure(f"the upload answered {status}: {answer[:300]!r}")
    owners = s.ok("stat -c '%U:%G %a' /var/lib/carouseld/images/from-a-phone.jpg").strip()
    if owners != "carouseld-web:carouseld 640":
        raise Failure(f"the uploaded picture is {owners}")
    s.wait("the daemon to list the upload", lambda: s.status()["count"] == before + 1, 60)

    # A tap on Next: the daemon grants the page's user what drives the frame.
    index = s.status()["index"]
    status, _, answer = page.request("POST", "/drive/next", body=b"", cookie=cookie, headers={"Accept": "application/json"})
    if status != 200:
        raise Failure(f"next from the page answered {status}: {answer[:200]!r}")
    s.wait("the frame to move on", lambda: s.status()["index"] == (index + 1) % (before + 1), 60)

    # The album as it was for the checks after this one.
    s.ok("rm /var/lib/carouseld/images/from-a-phone.jpg")
    s.wait("the daemon to drop the upload", lambda: s.status()["count"] == before, 60)

    # The local network only: a peer at a public address (TEST-NET-2, on lo
    # here) is dropped by the socket's filter; a private one is answered.
    answers = {}
    for label, address in (("public", "198.51.100.7"), ("private", "192.168.77.7")):
        s.ok(f"python3 -c {quote(SET_ADDRESS)} lo:{label[:3]} {address} 255.255.255.255")
        answers[label] = s.ok(f"python3 -c {quote(CONNECT_FROM)} {address}", timeout=60).strip()
    if not answers["public"].startswith("refused") or not answers["private"].startswith("answered"):
        raise Failure(f"from outside the local network: {answers['public']}; from a private address: {answers['private']}")
    return (f"inactive until opened, then {first:.1f} s to the first page from the host; signed in, an upload "
            f"carouseld-web:carouseld 640 in the list, next moved the frame; both processes without network; "
            f"198.51.100.7 {answers['public'][:40]}, 192.168.77.7 {answers['private'][:20]}")


def web_over_https(s, readme, port, https_port, failure, folder, guest_folder):
    """The check: HTTPS as README.md turns it on. `folder` is where the test
    CA's files are made on the host, `guest_folder` the same in the guest."""
    Failure = failure
    files = web_https.certificates(folder)
    os.replace(files["page.crt"], os.path.join(folder, "frame.crt"))
    os.replace(files["page.key"], os.path.join(folder, "frame.key"))
    here = f"cd {quote(guest_folder)} && "
    s.ok(here + readme("sudo install -m 0644 frame.crt /etc/carouseld/web.crt"))
    s.ok(here + readme("sudo install -o carouseld-web -g carouseld-web -m 0600 frame.key /etc/carouseld/web.key"))
    # The drop-in README.md shows, written by the test (README.md says to write it with an editor).
    s.ok("mkdir -p /etc/carouseld/carouseld.ini.d && printf '[web]\\ncertificate = /etc/carouseld/web.crt\\n"
         "key = /etc/carouseld/web.key\\n' > /etc/carouseld/carouseld.ini.d/web-https.ini")
    s.ok(readme("sudo systemctl enable --now carouseld-web-https.socket"), timeout=120)
    s.ok(readme("sudo systemctl restart carouseld-web.service"), timeout=120)
    listen = s.ok("systemctl show carouseld-web-https.socket -p Listen --value").strip()
    if ":443 " not in listen + " ":
        raise Failure(f"carouseld-web-https.socket listens on {listen!r}, not port 443")

    page = web_https.Https(None, https_port, files["ca.crt"])
    status, headers, body, version = page.request("GET", "/login")
    if status != 200 or b"password" not in body.lower():
        raise Failure(f"GET /login over HTTPS from the host answered {status}: {body[:200]!r}")
    status, headers, _, _ = page.request("POST", "/login", body=urllib.parse.urlencode({"password": PASSWORD}),
                                         headers={"Content-Type": "application/x-www-form-urlencoded"})
    attributes = [a.strip().lower() for a in headers.get("set-cookie", "").split(";")]
    if status != 303 or "secure" not in attributes:
        raise Failure(f"signing in over HTTPS answered {status}, cookie {attributes}")
    proxy = s.ok(f"systemctl is-active {HTTPS_PROXY}").strip()
    pid = s.ok(f"systemctl show {HTTPS_PROXY} -p MainPID --value").strip()
    uid = s.ok(f"awk '/^Uid:/ {{ print $2 }}' /proc/{pid}/status").split()[0]
    if proxy != "active" or uid != s.ok("id -u carouseld-web").strip():
        raise Failure(f"{HTTPS_PROXY} is {proxy}, uid {uid}")
    # Port 443 is the local network's only too: the addresses of the check before, on lo.
    answers = {}
    for label, address in (("public", "198.51.100.7"), ("private", "192.168.77.7")):
        s.ok(f"python3 -c {quote(SET_ADDRESS)} lo:{label[:3]} {address} 255.255.255.255")
        answers[label] = s.ok(f"python3 -c {quote(CONNECT_FROM)} {address} 443", timeout=60).strip()
    if not answers["public"].startswith("refused") or not answers["private"].startswith("answered TLSv1."):
        raise Failure(f"port 443 from outside the local network: {answers['public']}; from a private address: "
                      f"{answers['private']}")
    # Port 80 now only sends browsers to HTTPS (port 443: no port in the address).
    status, headers, _ = Page(port).request("GET", "/photos")
    if status != 302 or headers.get("location") != "https://127.0.0.1/photos":
        raise Failure(f"port 80 answered {status} {headers.get('location')!r}")
    # As it was for the checks after this one: plain HTTP on port 80.
    s.ok(f"systemctl disable --now carouseld-web-https.socket && systemctl stop {HTTPS_PROXY}"
         " && rm /etc/carouseld/carouseld.ini.d/web-https.ini && systemctl restart carouseld-web.service", timeout=120)
    return (f"{version} with the test CA's certificate, cookie Secure, as carouseld-web; port 80 sends to HTTPS; "
            f"443 from 198.51.100.7 {answers['public'][:40]}, from 192.168.77.7 {answers['private']}")


def quote(text):
    return shlex.quote(text)
