# carouseld: build, install, make an installable bundle.
#
#   make build                     release binaries, Swift's runtime linked in statically
#   sudo make install              what make build built, into PREFIX (/usr/local): unit, user, /var/lib/carouseld/images
#   make install DESTDIR=/tmp/x PREFIX=/usr   staging for a package (nothing else touched)
#   make dist                      out/dist/carouseld-VERSION-ARCH.tar.gz for a board without Swift
#   make deb                       out/deb/carouseld_VERSION_ARCH.deb (Debian's debhelper), for apt install
#   make test                      the whole test suite (scripts/test.sh, as root)

PREFIX ?= /usr/local
DESTDIR ?=
# SwiftPM scratch folder of the static release build (shared with scripts/test.sh).
SCRATCH ?= .build-static
SWIFT ?= swift
SWIFT_BUILD = $(SWIFT) build -c release --static-swift-stdlib --scratch-path $(SCRATCH)
BIN_DIR = $(SCRATCH)/release
VERSION := $(shell sed -n 's/.*static let string = "\([^"]*\)".*/\1/p' Sources/CarouselConfig/Version.swift)

.PHONY: all build install dist deb test clean-dist version bin-dir

all: build

build:
	$(SWIFT_BUILD) --product carouseld
	$(SWIFT_BUILD) --product carouselctl
	$(SWIFT_BUILD) --product carouseld-web

# Installs what `make build` built, without building: `sudo make install`
# must not need Swift in root's PATH. Builds only if nothing was built yet.
install: $(BIN_DIR)/carouseld $(BIN_DIR)/carouselctl $(BIN_DIR)/carouseld-web
	PREFIX="$(PREFIX)" DESTDIR="$(DESTDIR)" CAROUSELD_BIN_DIR="$(abspath $(BIN_DIR))" bash scripts/install.sh

$(BIN_DIR)/carouseld $(BIN_DIR)/carouselctl $(BIN_DIR)/carouseld-web:
	$(MAKE) build

dist: build
	bash scripts/dist.sh --bin-dir "$(BIN_DIR)"

# The same release build, packaged by Debian's tools (debian/): see scripts/deb.sh.
deb: build
	bash scripts/deb.sh

test:
	bash scripts/test.sh

version:
	@echo $(VERSION)

# Where `make build` leaves the binaries (debian/rules asks).
bin-dir:
	@echo $(BIN_DIR)

clean-dist:
	rm -rf out/dist
