// libmosquitto (Debian: libmosquitto-dev, pkg-config: libmosquitto): the MQTT
// client, driven from the daemon's own epoll loop (no thread of its own).
#include <mosquitto.h>
