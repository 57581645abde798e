/// The version of carouseld, carouselctl and the socket protocol they speak.
public enum CarouselVersion {
    public static let string = "0.1.0"
}
