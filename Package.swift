// swift-tools-version:6.0
// carouseld: a full-screen touch image carousel for embedded Linux (DRM/KMS + libinput).
import PackageDescription

// HarfBuzz's and FreeType's headers are in folders of their own (what
// `pkg-config --cflags harfbuzz` gives). Named here rather than through
// `pkgConfig:`, whose flags would link the libraries again: they are opened
// with dlopen (see CTextLoader.h). Debian keeps both folders out of the
// multiarch tree, so they hold for every architecture.
let textHeaderFolders = ["/usr/include/harfbuzz", "/usr/include/freetype2"]
let textHeadersC: [CSetting] = [.unsafeFlags(textHeaderFolders.map { "-I" + $0 })]
let textHeadersSwift: [SwiftSetting] = [.unsafeFlags(textHeaderFolders.flatMap { ["-Xcc", "-I" + $0] })]

let package = Package(
    name: "carouseld",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "carouseld", targets: ["carouseld"]),
        .executable(name: "carouselctl", targets: ["carouselctl"]),
        .executable(name: "carouseld-web", targets: ["carouseld-web"]),
        .executable(name: "carousel-bench", targets: ["CarouselBenchmarks"]),
        .executable(name: "carousel-fuzz", targets: ["carousel-fuzz"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-numerics", from: "1.1.1"),
        // The frame's own page (`carouseld-web`): HTTP, sessions and password
        // hashes, the streaming multipart parser. The daemon links none of them.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth", from: "2.5.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.1"),
        .package(url: "https://github.com/vapor/multipart-kit", from: "4.7.1"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
    ],
    targets: [
        // The carousel model: gestures, physics, paging, autoplay, geometry.
        // Pure Swift, no I/O, no clock: time comes in as an argument.
        .target(
            name: "CarouselCore",
            dependencies: [.product(name: "RealModule", package: "swift-numerics")]
        ),
        // The INI file: a strict parser and the schema of every key (the
        // house's, and the capabilities' from their words).
        .target(name: "CarouselConfig", dependencies: ["CarouselCore", "CarouselPlatform", "CarouselWords", "CarouselCapabilities"]),
        // What a capability declares (`CapabilityWords`): its INI keys, its
        // requests, status fields, events and Home Assistant entities. Pure
        // Swift, below the configuration and the control grammar, which read them.
        .target(name: "CarouselWords", dependencies: ["CarouselCore", "CarouselPlatform"]),
        // The one list of the capabilities' words (`Capabilities.all`).
        .target(name: "CarouselCapabilities", dependencies: ["CarouselWords", "CarouselClipsWords", "CarouselPresenceWords", "CarouselPushedTextWords", "CarouselKenBurnsWords", "CarouselWebWords", "CarouselPairingWords"]),
        // A capability's words live in its room, in a module of their own, so
        // that `carouselctl`, the schema and the documents read them without
        // linking the service.
        .target(name: "CarouselClipsWords", dependencies: ["CarouselWords", "CarouselCore"], path: "Sources/CarouselClips/Words"),
        .target(name: "CarouselKenBurnsWords", dependencies: ["CarouselWords", "CarouselCore"], path: "Sources/CarouselKenBurns/Words"),
        .target(name: "CarouselWebWords", dependencies: ["CarouselWords", "CarouselCore"], path: "Sources/CarouselWeb/Words"),
        .target(name: "CarouselPairingWords", dependencies: ["CarouselWords", "CarouselCore", "CarouselPlatform"],
                path: "Sources/CarouselPairing/Words"),
        .target(name: "CarouselPushedTextWords", dependencies: ["CarouselWords", "CarouselCore", "CarouselPlatform"],
                path: "Sources/CarouselPushedText/Words"),
        .target(name: "CarouselPresenceWords", dependencies: ["CarouselWords", "CarouselCore", "CarouselPlatform"],
                path: "Sources/CarouselPresence/Words"),
        // `carouseld simulate`: script parser and the headless 60 Hz runner.
        .target(name: "CarouselSimulation", dependencies: ["CarouselCore", "CarouselConfig", "CarouselControl", "CarouselPlatform"]),
        // The running carousel: the loop, frame pacing, album state, input
        // routing, the control socket's answers, reload and `set`. Wires the
        // other rooms together; the executable only parses arguments and starts it.
        // The port between the loop and its services: `LoopService`, the
        // context a service reads and asks through (`ServiceContext`: a
        // read-only `LoopView`, an outbox of typed `LoopAsk`s), the
        // happenings it subscribes to, the loop's one way off it
        // (`LoopExecutor`). Services live in rooms that see this, never the daemon.
        .target(name: "CarouselLoop", dependencies: ["CarouselCore", "CarouselConfig", "CarouselControl", "CarouselPlatform", "CarouselImaging", "CarouselRender", "CarouselInput"],
                swiftSettings: textHeadersSwift),
        // Services behind the port, a room each for a capability: clips
        // (`[video]`), the presence sensor, pushed text; and the loop's own
        // small services. None of them sees the daemon.
        .target(name: "CarouselKenBurns", dependencies: ["CarouselLoop", "CarouselKenBurnsWords", "CarouselCore", "CarouselConfig", "CarouselImaging", "CarouselPlatform", "CarouselRender",
                                                         .product(name: "RealModule", package: "swift-numerics")],
                exclude: ["Words"]),
        .target(name: "CarouselPairing", dependencies: ["CarouselLoop", "CarouselPairingWords", "CarouselConfig", "CarouselControl", "CarouselCore", "CarouselPlatform", "CarouselPushedText", "CarouselRender"],
                exclude: ["Words"], swiftSettings: textHeadersSwift),
        .target(name: "CarouselClips", dependencies: ["CarouselLoop", "CarouselClipsWords", "CarouselCore", "CarouselConfig", "CarouselImaging", "CarouselPlatform", "CarouselRender", "CarouselVideo"],
                exclude: ["Words"], swiftSettings: textHeadersSwift),
        .target(name: "CarouselPresence", dependencies: ["CarouselLoop", "CarouselPresenceWords", "CarouselConfig", "CarouselPlatform", "CGPIODLoader"],
                exclude: ["Words"], swiftSettings: textHeadersSwift),
        .target(name: "CarouselPushedText", dependencies: ["CarouselLoop", "CarouselPushedTextWords", "CarouselConfig", "CarouselControl", "CarouselCore", "CarouselImaging", "CarouselPlatform", "CarouselRender", "CarouselText"],
                exclude: ["Words"], swiftSettings: textHeadersSwift),
        .target(name: "CarouselServices", dependencies: ["CarouselLoop", "CarouselCore", "CarouselConfig", "CarouselPlatform",
                                                        "CarouselAlbum", "CarouselImaging", "CarouselRender", "CarouselText"],
                swiftSettings: textHeadersSwift),
        // The control socket on the loop (the grammar, server and client are
        // CarouselControl's), and MQTT on the loop: the libmosquitto link and
        // the service over CarouselMQTT's protocol. Both ask the daemon for
        // answers and screenshots through the port.
        .target(name: "CarouselControlService", dependencies: ["CarouselLoop", "CarouselConfig", "CarouselControl", "CarouselCore", "CarouselPlatform", "CarouselWebWords"],
                swiftSettings: textHeadersSwift),
        .target(name: "CarouselMQTTClient", dependencies: ["CarouselCapabilities", "CarouselLoop", "CarouselConfig", "CarouselControl", "CarouselMQTT", "CarouselPlatform", "CMosquittoLoader"],
                swiftSettings: textHeadersSwift),
        .target(
            name: "CarouselDaemon",
            dependencies: [
                "CarouselLoop", "CarouselClips", "CarouselClipsWords", "CarouselPresence", "CarouselPresenceWords", "CarouselPushedTextWords", "CarouselPushedText", "CarouselServices",
                "CarouselKenBurns", "CarouselKenBurnsWords", "CarouselControlService", "CarouselMQTTClient",
                "CarouselPairing", "CarouselPairingWords",
                "CarouselCore", "CarouselConfig", "CarouselAlbum", "CarouselImaging", "CarouselRender",
                "CarouselDisplay", "CarouselPlatform", "CarouselDRM", "CarouselFBDev", "CarouselInput", "CarouselControl",
                "CarouselText", "CarouselCalibration", "CarouselSimulation",
                "CarouselInputService", "CarouselDisplayServices",
            ]
        ),
        .executableTarget(
            name: "carouseld",
            dependencies: [
                "CarouselDaemon", "CarouselConfig", "CarouselRender", "CarouselPlatform", "CarouselDRM", "CarouselInput",
                "CarouselImaging", "CarouselCalibration", "CarouselSync", .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // The frame's page (`carouseld-web`): a process of its own, with its own
        // user, that reaches the daemon through the control socket only and
        // writes into the album's folder only. Its room holds its words
        // (`[web]`), its pages and its HTTP server.
        .target(name: "CarouselWeb", dependencies: [
            "CarouselWebWords", "CarouselPairingWords", "CarouselConfig", "CarouselControl", "CarouselCore", "CarouselPlatform", "CarouselImaging", "CWebP",
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "HummingbirdAuth", package: "hummingbird-auth"),
            .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
            .product(name: "MultipartKit", package: "multipart-kit"),
            .product(name: "HTTPTypes", package: "swift-http-types"),
            .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
        ], exclude: ["Words"]),
        .executableTarget(
            name: "carouseld-web",
            dependencies: ["CarouselWeb", "CarouselWebWords", "CarouselConfig", "CarouselPlatform", "CarouselImaging", "CarouselVideo",
                           .product(name: "ArgumentParser", package: "swift-argument-parser"),
                           .product(name: "Hummingbird", package: "hummingbird"),
                           .product(name: "HummingbirdCore", package: "hummingbird"),
                           // HTTPS with [web] certificate and key: swift-nio-ssl's BoringSSL.
                           .product(name: "HummingbirdTLS", package: "hummingbird"),
                           .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket")]
        ),
        // Not HummingbirdTesting: the HTTP is tested against the real process
        // (Tests/Servers/web_e2e.py), and its AsyncHTTPClient would bring
        // swift-nio-ssl's BoringSSL into the debug build (measured: 208 s
        // against 91 s for the web's packages alone, 2 cores).
        .testTarget(name: "CarouselWebTests", dependencies: [
            "CarouselWeb", "CarouselWebWords", "CarouselConfig", "CarouselControl", "CarouselPlatform",
        ]),
        .executableTarget(
            name: "carouselctl",
            dependencies: ["CarouselControl", "CarouselPlatform", "CarouselWords", .product(name: "ArgumentParser", package: "swift-argument-parser")]
        ),
        // `swift run carousel-docs`: writes the shipped INI, the README's key
        // table and carouseld.ini(5) from the schema. Not shipped, not installed.
        .executableTarget(name: "carousel-docs", dependencies: ["CarouselConfig"]),
        .executableTarget(
            name: "CarouselBenchmarks",
            dependencies: ["CarouselCore", "CarouselSimulation", "CarouselImaging", "CarouselRender", "CarouselDisplay", "CarouselVideo"]
        ),
        // `carouseld calibrate`'s arithmetic: the least-squares fit of libinput's
        // calibration matrix, the targets, the check point, the udev rule. Pure Swift.
        .target(name: "CarouselCalibration", dependencies: ["CarouselCore"]),
        .testTarget(name: "CarouselCalibrationTests", dependencies: ["CarouselCalibration", "CarouselConfig", "CarouselCore"]),
        // Image decoding and scaling room: JPEG/PNG/WebP/GIF/HEIF/AVIF to upright pixels, pixman scaling.
        .systemLibrary(name: "CJPEG", pkgConfig: "libjpeg", providers: [.apt(["libjpeg62-turbo-dev"])]),
        .systemLibrary(name: "CPNG", pkgConfig: "libpng16", providers: [.apt(["libpng-dev"])]),
        .systemLibrary(name: "CWebP", pkgConfig: "libwebpdemux", providers: [.apt(["libwebp-dev"])]),
        // HEIF (.heic) and AVIF; Debian 12's libheif1 has libde265, dav1d and libaom built in.
        // Opened with dlopen by the process that decodes one (not linked: see CHeifLoader.h).
        .target(name: "CHeifLoader", dependencies: ["CPlatform"]),
        // giflib has no pkg-config file; its header and library are in the default paths.
        .systemLibrary(name: "CGIF", providers: [.apt(["libgif-dev"])]),
        .systemLibrary(name: "CPixman", pkgConfig: "pixman-1", providers: [.apt(["libpixman-1-dev"])]),
        // setjmp-based libjpeg/libpng error handling, which must not unwind through Swift.
        .target(name: "CImageCodecs", dependencies: ["CJPEG", "CPNG"]),
        .target(name: "CarouselImaging", dependencies: ["CarouselCore", "CImageCodecs", "CWebP", "CHeifLoader", "CGIF", "CPixman", "CPlatform", "CarouselPlatform"]),
        // Video clips (issue 29): FFmpeg 5.1's libavformat, libavcodec, libswscale and
        // libavutil (Debian: libavformat-dev libavcodec-dev libswscale-dev libavutil-dev,
        // the headers only). Opened with dlopen when the first clip is opened, never at
        // start-up (not linked: see CVideoLoader.h); the demuxing, decoding and scaling
        // that touch FFmpeg's structs are in C there.
        .target(name: "CVideoLoader", dependencies: ["CPlatform"]),
        // The video room: a clip's frames decoded off the loop, turned upright and
        // scaled into the caller's XRGB8888 buffer; a clip's poster picture.
        .target(name: "CarouselVideo", dependencies: ["CVideoLoader", "CarouselImaging", "CarouselCore", "CarouselPlatform"]),
        .testTarget(name: "CarouselVideoTests", dependencies: ["CarouselVideo", "CarouselImaging", "CarouselCore"]),
        // The platform: system calls, descriptors, the event loop's primitives.
        .target(name: "CPlatform"),
        .target(name: "CarouselPlatform", dependencies: ["CPlatform"]),
        .testTarget(name: "CarouselPlatformTests", dependencies: ["CarouselPlatform"]),
        // Where frames go: the DisplayBackend protocol and the offscreen backend.
        .target(name: "CarouselDisplay", dependencies: ["CarouselCore", "CarouselImaging"]),
        // The kernel's DRM/KMS display (libdrm).
        .systemLibrary(name: "CDRM", pkgConfig: "libdrm", providers: [.apt(["libdrm-dev"])]),
        .target(name: "CarouselDRM", dependencies: ["CarouselDisplay", "CarouselPlatform", "CarouselImaging", "CDRM", "CUdev"]),
        // The display on the loop, behind the port: its flip events, its hotplug
        // (udev), the screen power's timer. The backend and the screen power's
        // policy stay the daemon's.
        .target(name: "CarouselDisplayServices", dependencies: ["CarouselLoop", "CarouselDRM", "CarouselPlatform"],
                swiftSettings: textHeadersSwift),
        // The Linux framebuffer device (SPI panels, kernels without KMS): ioctls and the RGB565 row kernel in C.
        .target(name: "CFBDev"),
        .target(name: "CarouselFBDev", dependencies: ["CarouselDisplay", "CarouselPlatform", "CarouselImaging", "CFBDev"]),
        .testTarget(name: "CarouselFBDevTests", dependencies: ["CarouselFBDev", "CFBDev", "CarouselDisplay"]),
        .testTarget(name: "CarouselDRMTests", dependencies: ["CarouselDRM", "CarouselDisplay"]),
        // Touch, pointer and keyboard through libinput's udev backend.
        .systemLibrary(name: "CUdev", pkgConfig: "libudev", providers: [.apt(["libudev-dev"])]),
        // libinput's header only (Debian: libinput-dev; /usr/include, no flags
        // needed). No `pkgConfig:`, whose flags would link -linput: libinput,
        // and libwacom, glib and the rest it pulls in, are opened with dlopen
        // when the first input context is made, after the first picture is on
        // screen, never at start-up (not linked: see CInputLoader.h).
        .systemLibrary(name: "CLibinput", providers: [.apt(["libinput-dev"])]),
        .target(name: "CInputLoader", dependencies: ["CPlatform", "CLibinput"]),
        // libinput's va_list log handler, formatted in C and passed on as plain text.
        .target(name: "CInputShim", dependencies: ["CLibinput"]),
        .target(name: "CarouselInput", dependencies: ["CarouselCore", "CarouselPlatform", "CUdev", "CLibinput", "CInputLoader", "CInputShim"]),
        // Input on the loop, behind the port: the seat's devices opened after
        // the first frame, and what they say routed into the carousel's words.
        .target(name: "CarouselInputService", dependencies: ["CarouselPresenceWords", "CarouselLoop", "CarouselInput", "CarouselConfig", "CarouselCore", "CarouselImaging", "CarouselPlatform"],
                swiftSettings: textHeadersSwift),
        .testTarget(name: "CarouselInputTests", dependencies: ["CarouselInput", "CInputLoader", "CLibinput", "CUdev"]),
        // Text over pictures ([overlay]): fontconfig finds the font and its
        // fallbacks, HarfBuzz shapes (right-to-left, CJK), FreeType rasterises.
        // The three (Debian: libfontconfig-dev, libfreetype-dev, libharfbuzz-dev,
        // the headers only) are opened with dlopen when the first text is drawn,
        // never at start-up (not linked: see CTextLoader.h).
        .target(name: "CTextLoader", dependencies: ["CPlatform"], cSettings: textHeadersC),
        .target(name: "CarouselText", dependencies: ["CarouselCore", "CarouselImaging", "CarouselPlatform", "CTextLoader"],
                swiftSettings: textHeadersSwift),
        .testTarget(name: "CarouselTextTests", dependencies: ["CarouselText", "CarouselImaging", "CarouselCore"]),
        // Composition: item pictures, page dots and rotation into frames; the decode cache.
        .target(name: "CarouselRender", dependencies: ["CarouselCore", "CarouselImaging", "CarouselDisplay", "CarouselText", "CarouselVideo", "CarouselPlatform"]),
        .testTarget(name: "CarouselRenderTests", dependencies: ["CarouselRender", "CarouselCore", "CarouselImaging", "CarouselDisplay", "CarouselText", "CarouselPlatform"]),
        .testTarget(name: "CarouselImagingTests", dependencies: ["CarouselImaging", "CarouselCore", "CPixman"], exclude: ["Fixtures"]),
        .testTarget(name: "CarouselCoreTests", dependencies: ["CarouselCore"]),
        .testTarget(name: "CarouselConfigTests", dependencies: ["CarouselConfig", "CarouselCapabilities", "CarouselPresenceWords", "CarouselClipsWords", "CarouselPushedTextWords"]),
        .testTarget(name: "CarouselSimulationTests", dependencies: ["CarouselSimulation", "CarouselConfig"]),
        // The album: which image files to show, in what order; the folder watch.
        .target(name: "CarouselAlbum", dependencies: ["CarouselPlatform", "CarouselImaging"]),
        .testTarget(name: "CarouselAlbumTests", dependencies: ["CarouselAlbum", "CarouselImaging"]),
        // The control socket: the line protocol (the capabilities' requests read
        // by their words), its JSON, and the non-blocking server.
        .target(name: "CarouselControl", dependencies: ["CarouselCore", "CarouselPlatform", "CarouselWords", "CarouselCapabilities"]),
        .testTarget(name: "CarouselControlTests", dependencies: ["CarouselControl", "CarouselPlatform", "CarouselPushedTextWords"]),
        // MQTT and Home Assistant without I/O: the topic layout, what a command
        // message asks for, the state publisher, the discovery messages (the
        // capabilities' entities as their words declare them).
        .target(name: "CarouselMQTT", dependencies: ["CarouselControl", "CarouselPlatform", "CarouselWords"]),
        .testTarget(name: "CarouselMQTTTests", dependencies: ["CarouselMQTT", "CarouselControl", "CarouselPlatform", "CarouselCapabilities", "CarouselConfig", "CarouselPresenceWords", "CarouselPushedTextWords"]),
        // libmosquitto (Debian: libmosquitto-dev), driven from the daemon's epoll loop.
        // Opened with dlopen when [mqtt] first connects (not linked: see CMosquittoLoader.h).
        .target(name: "CMosquittoLoader", dependencies: ["CPlatform"]),
        // libgpiod v1 (Debian: libgpiod-dev), a presence sensor's GPIO line on the loop.
        // Opened with dlopen when [power] presence names a GPIO line (not linked: see CGPIODLoader.h).
        .target(name: "CGPIODLoader", dependencies: ["CPlatform"]),
        // `carouseld sync`: Immich and rclone into the album folder, a process of its own.
        // libcurl is opened with dlopen by the sync only (not linked: see CCurlLoader.h).
        .target(name: "CCurlLoader", dependencies: ["CPlatform"]),
        .target(name: "CarouselSync", dependencies: ["CCurlLoader", "CPlatform", "CarouselConfig", "CarouselImaging", "CarouselPlatform"]),
        .testTarget(name: "CarouselSyncTests", dependencies: ["CarouselSync", "CarouselConfig", "CarouselPlatform", "CarouselImaging"]),
        // Fuzzing: the properties each input format must keep (CarouselFuzzing),
        // and the libFuzzer entry that scripts/fuzz.sh builds with sanitizers
        // (a plain build makes it a replayer of input files). `swift test`
        // replays the seeds and regression inputs in Fuzz/ through the same checks.
        .target(name: "CarouselFuzzing", dependencies: [
            "CarouselConfig", "CarouselControl", "CarouselCore", "CarouselImaging", "CarouselPlatform", "CarouselSimulation",
            "CarouselVideo", "CFuzzSupport",
        ]),
        // The heap a decode allocates, through AddressSanitizer's hooks (fuzz builds only).
        .target(name: "CFuzzSupport"),
        .executableTarget(name: "carousel-fuzz", dependencies: ["CarouselFuzzing", "CarouselPlatform"]),
        .testTarget(name: "CarouselKenBurnsTests", dependencies: ["CarouselKenBurns", "CarouselKenBurnsWords", "CarouselCore", "CarouselImaging"]),
        .testTarget(name: "CarouselFuzzingTests", dependencies: ["CarouselFuzzing", "CarouselImaging"]),
        // Tier 3: the daemon on the offscreen display: its pieces as units on a
        // manual clock, and the whole daemon run as a process.
        .testTarget(name: "CarouselDaemonTests", dependencies: [
            "CarouselDaemon", "CarouselControl", "CarouselCore", "CarouselConfig", "CarouselDisplay",
            "CarouselInput", "CarouselAlbum", "CarouselPlatform", "CarouselImaging",
            "CarouselLoop", "CarouselClips", "CarouselPresence", "CarouselPushedText", "CarouselPushedTextWords", "CarouselPresenceWords", "CarouselClipsWords", "CarouselCapabilities", "CarouselServices",
            "CarouselInputService", "CarouselKenBurns", "CarouselKenBurnsWords",
            "CarouselMQTT", "CarouselMQTTClient",
        ]),
    ]
)
