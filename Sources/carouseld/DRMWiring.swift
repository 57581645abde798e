import ArgumentParser
import CarouselConfig
import CarouselDisplay

/// The DRM backend, as the configuration's [display] section asks for it.
func makeDRMBackend(_ configuration: Configuration) throws -> DisplayBackend {
    // FIXME: the DRM backend is being written; until it lands, `run` needs --display offscreen:WxH.
    log(.error, "the DRM display backend is not part of this build yet; use --display offscreen:WIDTHxHEIGHT")
    throw ExitCode(1)
}
