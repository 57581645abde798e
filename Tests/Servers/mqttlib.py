"""What the MQTT end-to-end scripts (mqtt_e2e.py, ha_e2e.py) share: Debian's
Mosquitto started on a loopback port of its own, mosquitto_sub watching a
topic filter, mosquitto_pub, and carouseld on the offscreen display with an
`[mqtt]` section."""
import os
import socket
import subprocess
import threading

from checks import IMAGES, OffscreenDaemon, free_port, until


class Broker:
    """`mosquitto -c` on a loopback port, in a folder of its own."""

    def __init__(self, folder, extra="", anonymous=True, port=None):
        self.folder = folder
        self.port = port or free_port()
        self.conf = os.path.join(folder, f"mosquitto-{self.port}.conf")
        with open(self.conf, "w") as f:
            f.write(f"listener {self.port} 127.0.0.1\nallow_anonymous {'true' if anonymous else 'false'}\n"
                    f"persistence false\n{extra}")
        self.proc = None

    def start(self):
        log = open(os.path.join(self.folder, f"broker-{self.port}.log"), "ab")
        self.proc = subprocess.Popen(["mosquitto", "-c", self.conf], stdout=log, stderr=log)

        def accepts():
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return True
            except OSError:
                return False
        until(f"the broker on port {self.port}", accepts, timeout=20)
        return self

    def kill(self):
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


class Watcher:
    """mosquitto_sub on a filter: every message as (retained, topic, payload bytes)."""

    def __init__(self, broker, topic="#", extra=()):
        self.messages = []
        self.times = []
        self.lock = threading.Lock()
        self.proc = subprocess.Popen(
            ["stdbuf", "-oL", "mosquitto_sub", "-h", "127.0.0.1", "-p", str(broker.port), "-t", topic, "-q", "1",
             "-F", "%U %r %t %x", *extra], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            parts = line.decode().rstrip("\n").split(" ", 3)
            if len(parts) < 3:
                continue
            # %U: when mosquitto_sub received it (Unix time, ns).
            at, retained, topic, payload = float(parts[0]), parts[1] == "1", parts[2], bytes.fromhex(parts[3] if len(parts) > 3 else "")
            with self.lock:
                self.messages.append((retained, topic, payload))
                self.times.append(at)

    def on(self, topic):
        with self.lock:
            return [(r, p) for r, t, p in self.messages if t == topic]

    def texts(self, topic):
        return [p.decode(errors="replace") for _, p in self.on(topic)]

    def wait(self, what, topic, predicate=lambda p: True, after=0, timeout=30):
        """The first payload on `topic` (from the `after`th on) for which `predicate` holds."""
        def found():
            for r, p in self.on(topic)[after:]:
                if predicate(p):
                    return (r, p)
            return None
        return until(what, found, timeout)

    def close(self):
        self.proc.kill()
        self.proc.wait()


def pub(broker, topic, message, extra=()):
    subprocess.run(["mosquitto_pub", "-h", "127.0.0.1", "-p", str(broker.port), "-t", topic, "-m", message, "-q", "1",
                    *extra], check=True, timeout=30)


class Daemon(OffscreenDaemon):
    """carouseld run on the offscreen display with an INI of its own."""

    def __init__(self, binary, folder, mqtt, extra=""):
        self.folder = folder
        self.binary = binary
        self.socket = os.path.join(folder, f"control-{free_port()}.sock")
        self.ini = os.path.join(folder, "carouseld.ini")
        self.write_ini(mqtt, extra)
        super().__init__(binary, self.ini, folder, self.socket, "first picture on screen", "the daemon's first picture")

    def write_ini(self, mqtt, extra=""):
        lines = [f"[images]\npath = {IMAGES}\n[control]\nsocket = {self.socket}\n{extra}\n[mqtt]\n"]
        lines += [f"{k} = {v}\n" for k, v in mqtt.items()]
        with open(self.ini, "w") as f:
            f.write("".join(lines))
