//! What an upload may be (docs/files.md): the limits and the recognition of an image by its
//! content. Plain functions, no HTTP: the handler maps their errors to 400 and 413.

use crate::structure::{self, Missing};
use workapi_kit::files::ImageType;

/// The largest file accepted, in bytes (4 MiB). API Gateway carries up to 10 MB, but Lambda's
/// synchronous payload limit is 6 MB (6,291,456 bytes) for the whole event, and the body travels
/// in it base64-encoded (4/3 of its size): 4 MiB plus the multipart framing is about 5.6 MB
/// encoded, which leaves room for the rest of the event.
pub const MAX_FILE_BYTES: usize = 4 * 1024 * 1024;

/// The largest request body: the file plus room for the multipart framing (boundaries, part
/// headers). Bodies above it are 413 before they are parsed.
pub const MAX_BODY_BYTES: usize = MAX_FILE_BYTES + 64 * 1024;

/// The longest side accepted, in pixels: beyond it an image is a decompression bomb for
/// whoever renders it, not a logo.
pub const MAX_DIMENSION: u32 = 10_000;

/// The most pixels accepted (25 megapixels, e.g. 5000 × 5000 or a 24-megapixel photo): decoded
/// as RGBA that is 100 MB, the most a browser or a thumbnailer should be asked to hold for one
/// image. A few kilobytes of compressed data can declare far more (a 74-byte PNG declares
/// 10000 × 10000), so the limit is on what the header declares, not on the file size.
pub const MAX_PIXELS: u64 = 25_000_000;

/// A recognised image: its format and its size in pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Image {
    pub format: ImageType,
    pub width: u32,
    pub height: u32,
}

/// Why bytes are not an acceptable image (each message reads after "file ").
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    Empty,
    Svg,
    UnknownFormat,
    /// The signature of a known format, but a header that does not parse.
    Corrupt(ImageType),
    TooManyPixels {
        width: u32,
        height: u32,
    },
    /// The header parses but the file ends inside its structure.
    Truncated(ImageType),
    /// The structure is whole but holds no pixel data.
    NoImageData(ImageType),
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::Empty => f.write_str("file is empty"),
            Refusal::Svg => f.write_str("file is an SVG image; only PNG, JPEG, WebP and GIF images are accepted"),
            Refusal::UnknownFormat => f.write_str("file must be a PNG, JPEG, WebP or GIF image"),
            Refusal::Corrupt(format) => {
                write!(f, "file starts like a {} image but its header does not parse", format.content_type())
            }
            Refusal::TooManyPixels { width, height } => write!(
                f,
                "file is {width}×{height} pixels; each side may be at most {MAX_DIMENSION} and the whole at most {MAX_PIXELS} pixels"
            ),
            Refusal::Truncated(format) => {
                write!(f, "file is a {} image cut short: it ends inside its data", format.content_type())
            }
            Refusal::NoImageData(format) => {
                write!(f, "file has a {} header but no image data", format.content_type())
            }
        }
    }
}

/// The format named by the first bytes (the formats' signatures), whatever the file claims.
pub fn sniff(bytes: &[u8]) -> Option<ImageType> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some(ImageType::Png)
    } else if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Some(ImageType::Jpeg)
    } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        Some(ImageType::Gif)
    } else if bytes.len() >= 12 && bytes.starts_with(b"RIFF") && &bytes[8..12] == b"WEBP" {
        Some(ImageType::Webp)
    } else {
        None
    }
}

/// Whether the bytes read as SVG (for a clearer refusal; SVG is refused either way): an
/// `<svg` element near the start, after any XML declaration, comments or doctype.
fn looks_like_svg(bytes: &[u8]) -> bool {
    let head = &bytes[..bytes.len().min(4096)];
    let text = String::from_utf8_lossy(head).to_ascii_lowercase();
    text.trim_start_matches('\u{feff}').trim_start().starts_with('<') && text.contains("<svg")
}

/// Recognises a PNG, JPEG, WebP or GIF image by its signature, reads its dimensions from its
/// header (imagesize) and checks them against the limits, then walks its structure for image
/// data ([`structure`]): the declared content type and file name play no part.
pub fn recognise(bytes: &[u8]) -> Result<Image, Refusal> {
    if bytes.is_empty() {
        return Err(Refusal::Empty);
    }
    let Some(format) = sniff(bytes) else {
        return Err(if looks_like_svg(bytes) { Refusal::Svg } else { Refusal::UnknownFormat });
    };
    let parsed_as = match imagesize::image_type(bytes) {
        Ok(imagesize::ImageType::Png) => Some(ImageType::Png),
        Ok(imagesize::ImageType::Jpeg) => Some(ImageType::Jpeg),
        Ok(imagesize::ImageType::Webp) => Some(ImageType::Webp),
        Ok(imagesize::ImageType::Gif) => Some(ImageType::Gif),
        _ => None,
    };
    if parsed_as != Some(format) {
        return Err(Refusal::Corrupt(format));
    }
    let size = imagesize::blob_size(bytes).map_err(|_| Refusal::Corrupt(format))?;
    let (Ok(width), Ok(height)) = (u32::try_from(size.width), u32::try_from(size.height)) else {
        return Err(Refusal::Corrupt(format));
    };
    if width == 0 || height == 0 {
        return Err(Refusal::Corrupt(format));
    }
    if width > MAX_DIMENSION || height > MAX_DIMENSION || u64::from(width) * u64::from(height) > MAX_PIXELS {
        return Err(Refusal::TooManyPixels { width, height });
    }
    structure::check(format, bytes).map_err(|missing| match missing {
        Missing::Truncated => Refusal::Truncated(format),
        Missing::NoImageData => Refusal::NoImageData(format),
    })?;
    Ok(Image { format, width, height })
}

/// Tiny valid images of each format (hex), made with Pillow, for tests and the events.
pub mod samples {
    /// Decodes a sample.
    pub fn bytes(hex: &str) -> Vec<u8> {
        (0..hex.len()).step_by(2).map(|i| u8::from_str_radix(&hex[i..i + 2], 16).expect("hex")).collect()
    }

    /// 3×2 pixels.
    pub const PNG: &str = concat!(
        "89504e470d0a1a0a0000000d49484452000000030000000208020000001216f14d0000001549444154789c633c2127c7",
        "c0c0c0c0c0c0c4000300132e01086ac065610000000049454e44ae426082",
    );
    /// 4×3 pixels.
    pub const JPEG: &str = concat!(
        "ffd8ffe000104a46494600010100000100010000ffdb004300281c1e231e19282321232d2b28303c64413c37373c7b58",
        "5d4964918099968f808c8aa0b4e6c3a0aadaad8a8cc8ffcbdaeef5ffffff9bc1fffffffaffe6fdfff8ffdb0043012b2d",
        "2d3c353c76414176f8a58ca5f8f8f8f8f8f8f8f8f8f8f8f8f8f8f8f8f8f8f8f8f8f8f8f8f8f8f8f8f8f8f8f8f8f8f8f8",
        "f8f8f8f8f8f8f8f8f8f8f8f8f8f8ffc00011080003000403012200021101031101ffc4001f0000010501010101010100",
        "000000000000000102030405060708090a0bffc400b5100002010303020403050504040000017d010203000411051221",
        "31410613516107227114328191a1082342b1c11552d1f02433627282090a161718191a25262728292a3435363738393a",
        "434445464748494a535455565758595a636465666768696a737475767778797a838485868788898a9293949596979899",
        "9aa2a3a4a5a6a7a8a9aab2b3b4b5b6b7b8b9bac2c3c4c5c6c7c8c9cad2d3d4d5d6d7d8d9dae1e2e3e4e5e6e7e8e9eaf1",
        "f2f3f4f5f6f7f8f9faffc4001f0100030101010101010101010000000000000102030405060708090a0bffc400b51100",
        "020102040403040705040400010277000102031104052131061241510761711322328108144291a1b1c109233352f015",
        "6272d10a162434e125f11718191a262728292a35363738393a434445464748494a535455565758595a63646566676869",
        "6a737475767778797a82838485868788898a92939495969798999aa2a3a4a5a6a7a8a9aab2b3b4b5b6b7b8b9bac2c3c4",
        "c5c6c7c8c9cad2d3d4d5d6d7d8d9dae2e3e4e5e6e7e8e9eaf2f3f4f5f6f7f8f9faffda000c03010002110311003f00ad",
        "45145647a07fffd9",
    );
    /// 5×4 pixels (lossless).
    pub const WEBP: &str = "524946461e000000574542505650384c110000002f04c0000007508f22d7a3ff8188e87f0000";
    /// 6×5 pixels.
    pub const GIF: &str = concat!(
        "47494638376106000500810000c81e1e0000000000000000002c000000000600050000080c0001081c48b0a0c1830203",
        "02003b",
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_are_recognised_with_their_dimensions() {
        let cases = [
            (samples::PNG, ImageType::Png, 3, 2),
            (samples::JPEG, ImageType::Jpeg, 4, 3),
            (samples::WEBP, ImageType::Webp, 5, 4),
            (samples::GIF, ImageType::Gif, 6, 5),
        ];
        for (hex, format, width, height) in cases {
            assert_eq!(recognise(&samples::bytes(hex)), Ok(Image { format, width, height }), "{format:?}");
        }
    }

    /// Signatures by their first bytes: the table of what `sniff` says.
    #[test]
    fn sniffing_reads_signatures_only() {
        let cases: &[(&[u8], Option<ImageType>)] = &[
            (b"\x89PNG\r\n\x1a\n", Some(ImageType::Png)),
            (b"\x89PNG\r\n\x1a", None),
            (b"\x89png\r\n\x1a\n", None),
            (&[0xFF, 0xD8, 0xFF, 0xE0], Some(ImageType::Jpeg)),
            (&[0xFF, 0xD8], None),
            (b"GIF89a", Some(ImageType::Gif)),
            (b"GIF87a", Some(ImageType::Gif)),
            (b"GIF88a", None),
            (b"RIFF\0\0\0\0WEBPVP8 ", Some(ImageType::Webp)),
            (b"RIFF\0\0\0\0WAVEfmt ", None),
            (b"RIFF\0\0\0\0WEB", None),
            (b"<svg xmlns=\"http://www.w3.org/2000/svg\"/>", None),
            (b"BM\0\0", None),
            (b"II*\0", None),
            (b"", None),
            (b"hello.png", None),
        ];
        for (bytes, expected) in cases {
            assert_eq!(sniff(bytes), *expected, "{bytes:?}");
        }
    }

    #[test]
    fn refusals_name_what_is_wrong() {
        let cases: &[(&[u8], Refusal)] = &[
            (b"", Refusal::Empty),
            (b"this is text renamed to logo.png", Refusal::UnknownFormat),
            (b"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"1\" height=\"1\"/>", Refusal::Svg),
            (b"<?xml version=\"1.0\"?>\n<!-- x -->\n<svg/>", Refusal::Svg),
            (b"\xef\xbb\xbf<svg/>", Refusal::Svg),
            (b"<html><body>not svg</body></html>", Refusal::UnknownFormat),
            (b"\x89PNG\r\n\x1a\n", Refusal::Corrupt(ImageType::Png)),
            (b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR", Refusal::Corrupt(ImageType::Png)),
            (b"GIF89a", Refusal::Corrupt(ImageType::Gif)),
            (b"RIFF\0\0\0\0WEBP", Refusal::Corrupt(ImageType::Webp)),
            (&[0xFF, 0xD8, 0xFF, 0xD9], Refusal::Corrupt(ImageType::Jpeg)),
        ];
        for (bytes, expected) in cases {
            assert_eq!(recognise(bytes).as_ref(), Err(expected), "{:?}", String::from_utf8_lossy(bytes));
        }
    }

    #[test]
    fn a_zero_or_huge_side_is_refused() {
        let png = |width: u32, height: u32| {
            let mut bytes = samples::bytes(samples::PNG);
            bytes[16..20].copy_from_slice(&width.to_be_bytes());
            bytes[20..24].copy_from_slice(&height.to_be_bytes());
            bytes
        };
        assert_eq!(recognise(&png(MAX_DIMENSION, 1)).map(|i| i.width), Ok(MAX_DIMENSION));
        assert_eq!(
            recognise(&png(MAX_DIMENSION + 1, 1)),
            Err(Refusal::TooManyPixels { width: MAX_DIMENSION + 1, height: 1 })
        );
        assert_eq!(recognise(&png(0, 1)), Err(Refusal::Corrupt(ImageType::Png)));
    }

    #[test]
    fn the_pixel_count_is_limited_as_well_as_each_side() {
        let png = |width: u32, height: u32| {
            let mut bytes = samples::bytes(samples::PNG);
            bytes[16..20].copy_from_slice(&width.to_be_bytes());
            bytes[20..24].copy_from_slice(&height.to_be_bytes());
            bytes
        };
        assert!(recognise(&png(5000, 5000)).is_ok(), "exactly {MAX_PIXELS} pixels");
        assert!(recognise(&png(10_000, 2500)).is_ok());
        for (width, height) in [(5000, 5001), (10_000, 10_000), (10_000, 2501)] {
            assert_eq!(recognise(&png(width, height)), Err(Refusal::TooManyPixels { width, height }));
        }
        let message = Refusal::TooManyPixels { width: 10_000, height: 10_000 }.to_string();
        assert!(message.contains("25000000") && message.contains("10000×10000"), "{message}");
    }

    /// The report's case: a PNG signature and IHDR declaring 10000 × 10000, then IEND, 74 bytes
    /// or so in all. Refused for its size; at a size within the limits, for having no IDAT.
    #[test]
    fn a_header_without_image_data_is_refused() {
        let png = |width: u32, height: u32| {
            let mut bytes = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR".to_vec();
            bytes.extend_from_slice(&width.to_be_bytes());
            bytes.extend_from_slice(&height.to_be_bytes());
            bytes.extend_from_slice(&[8, 2, 0, 0, 0, 0x12, 0x16, 0xf1, 0x4d]); // rest of IHDR, CRC
            bytes.extend_from_slice(b"\0\0\0\0IEND\xae\x42\x60\x82");
            bytes
        };
        assert_eq!(recognise(&png(10_000, 10_000)), Err(Refusal::TooManyPixels { width: 10_000, height: 10_000 }));
        assert_eq!(recognise(&png(3, 2)), Err(Refusal::NoImageData(ImageType::Png)));
        assert!(Refusal::NoImageData(ImageType::Png).to_string().contains("no image data"));

        // A GIF with a screen and colour table but only the trailer.
        let mut gif = samples::bytes(samples::GIF);
        let trailer = gif.len() - 1;
        let colour_table = 3 << ((gif[10] & 0x07) + 1);
        gif.truncate(6 + 7 + colour_table);
        gif.push(0x3B);
        assert!(trailer > gif.len());
        assert_eq!(recognise(&gif), Err(Refusal::NoImageData(ImageType::Gif)));

        // A JPEG whose frame header is followed directly by EOI.
        let jpeg = samples::bytes(samples::JPEG);
        let sos = jpeg.windows(2).position(|w| w == [0xFF, 0xDA]).unwrap();
        let mut no_scan = jpeg[..sos].to_vec();
        no_scan.extend_from_slice(&[0xFF, 0xD9]);
        assert_eq!(recognise(&no_scan), Err(Refusal::NoImageData(ImageType::Jpeg)));

        // A WebP container with only a metadata chunk (RIFF size 4 + 8 + 2).
        let no_bitstream = b"RIFF\x0e\0\0\0WEBPEXIF\x02\0\0\0ab";
        assert_eq!(structure::check(ImageType::Webp, no_bitstream), Err(Missing::NoImageData));
        assert!(recognise(no_bitstream).is_err());
        assert_eq!(structure::check(ImageType::Webp, &samples::bytes(samples::WEBP)), Ok(()));
    }

    /// Every prefix of every sample that still parses as a header is refused as cut short or
    /// without data: no truncated file is stored.
    #[test]
    fn every_truncation_of_the_samples_is_refused() {
        for hex in [samples::PNG, samples::JPEG, samples::WEBP, samples::GIF] {
            let bytes = samples::bytes(hex);
            for cut in 0..bytes.len() {
                let refusal = recognise(&bytes[..cut]).expect_err("a cut sample is refused");
                assert!(
                    matches!(
                        refusal,
                        Refusal::Truncated(_) | Refusal::Corrupt(_) | Refusal::Empty | Refusal::UnknownFormat
                    ),
                    "{cut} of {}: {refusal:?}",
                    bytes.len()
                );
            }
        }
        let mut png = samples::bytes(samples::PNG);
        png.truncate(png.len() - 12); // without IEND
        assert_eq!(recognise(&png), Err(Refusal::Truncated(ImageType::Png)));
    }

    /// Bytes after the end marker are ignored, as decoders do (the upload suite pads a valid
    /// PNG to the size limit).
    #[test]
    fn trailing_bytes_after_the_end_are_accepted() {
        for hex in [samples::PNG, samples::JPEG, samples::GIF] {
            let mut bytes = samples::bytes(hex);
            bytes.resize(bytes.len() + 1000, 0);
            assert!(recognise(&bytes).is_ok(), "{hex}");
        }
    }

    /// The README's upload example sends `examples/logo.png`: it must be accepted.
    #[test]
    fn the_example_logo_is_an_acceptable_image() {
        let logo = include_bytes!("../../../examples/logo.png");
        assert_eq!(recognise(logo), Ok(Image { format: ImageType::Png, width: 64, height: 64 }));
    }

    #[test]
    fn the_limits_fit_lambda_payloads() {
        // base64 of the largest body, with 256 KiB left for the rest of the event.
        assert!(MAX_BODY_BYTES.div_ceil(3) * 4 + 256 * 1024 <= 6_291_456);
    }
}
