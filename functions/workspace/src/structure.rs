//! Whether an image's container holds image data (docs/files.md#what-is-checked): the chunks,
//! segments or blocks of the format are walked from the signature to the end marker, each
//! complete within the bytes, and the pixel data's container is there. The compressed pixel
//! data itself is not decoded (no decoder runs on upload, and nothing is re-encoded): a file
//! whose structure is whole but whose compressed data is garbage is stored as sent.

use workapi_kit::files::ImageType;

/// What is missing, for the refusal's message ("file …").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Missing {
    /// The bytes end inside a chunk, segment or block: the file was cut short.
    Truncated,
    /// The structure is whole but holds no pixel data (a PNG without IDAT, a GIF without an
    /// image, a JPEG without a frame or scan, a WebP without a bitstream).
    NoImageData,
}

/// Walks the structure of an image whose signature named `format`.
pub fn check(format: ImageType, bytes: &[u8]) -> Result<(), Missing> {
    match format {
        ImageType::Png => png(bytes),
        ImageType::Jpeg => jpeg(bytes),
        ImageType::Gif => gif(bytes),
        ImageType::Webp => webp(bytes),
    }
}

/// A cursor over the bytes whose every read fails with `Truncated` past the end.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn new(bytes: &'a [u8], at: usize) -> Self {
        Reader { bytes, at }
    }
    fn take(&mut self, n: usize) -> Result<&'a [u8], Missing> {
        let end = self.at.checked_add(n).filter(|&end| end <= self.bytes.len()).ok_or(Missing::Truncated)?;
        let slice = &self.bytes[self.at..end];
        self.at = end;
        Ok(slice)
    }
    fn byte(&mut self) -> Result<u8, Missing> {
        Ok(self.take(1)?[0])
    }
    fn u16_be(&mut self) -> Result<usize, Missing> {
        let b = self.take(2)?;
        Ok(u16::from_be_bytes([b[0], b[1]]) as usize)
    }
    fn u32_be(&mut self) -> Result<usize, Missing> {
        let b = self.take(4)?;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]) as usize)
    }
    fn u32_le(&mut self) -> Result<usize, Missing> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
    }
}

/// PNG: chunks (length, type, data, CRC) from IHDR to IEND, each whole, at least one IDAT
/// with data. Bytes after IEND are ignored, as decoders do.
fn png(bytes: &[u8]) -> Result<(), Missing> {
    let mut reader = Reader::new(bytes, 8);
    let mut image_data = false;
    loop {
        let length = reader.u32_be()?;
        let kind = reader.take(4)?;
        reader.take(length)?;
        reader.take(4)?; // CRC
        match kind {
            b"IDAT" if length > 0 => image_data = true,
            b"IEND" => break,
            _ => {}
        }
    }
    if image_data { Ok(()) } else { Err(Missing::NoImageData) }
}

/// JPEG: marker segments from SOI to the first scan (SOS), a frame header (SOF) before it,
/// then entropy-coded data up to the EOI marker. `FF D9` cannot occur inside entropy-coded
/// data (a data byte FF is stuffed as FF 00), so the first one after the scan ends the image.
fn jpeg(bytes: &[u8]) -> Result<(), Missing> {
    let mut reader = Reader::new(bytes, 2);
    let mut frame = false;
    loop {
        // Markers may be preceded by any number of fill bytes FF.
        let mut marker = reader.byte()?;
        if marker != 0xFF {
            return Err(Missing::NoImageData);
        }
        while marker == 0xFF {
            marker = reader.byte()?;
        }
        match marker {
            0xD9 => return Err(Missing::NoImageData), // EOI before any scan
            0x01 | 0xD0..=0xD7 => continue,           // markers without a length
            _ => {}
        }
        let length = reader.u16_be()?;
        reader.take(length.checked_sub(2).ok_or(Missing::NoImageData)?)?;
        match marker {
            // Frame headers: every SOFn except DHT (C4), JPG (C8) and DAC (CC).
            0xC0..=0xCF if !matches!(marker, 0xC4 | 0xC8 | 0xCC) => frame = true,
            0xDA if !frame => return Err(Missing::NoImageData),
            0xDA => break,
            _ => {}
        }
    }
    let scan = &bytes[reader.at..];
    match scan.windows(2).position(|pair| pair == [0xFF, 0xD9]) {
        Some(0) => Err(Missing::NoImageData),
        Some(_) => Ok(()),
        None => Err(Missing::Truncated),
    }
}

/// GIF: the logical screen descriptor and its colour table, then extension and image blocks up
/// to the trailer (`;`), each whole, at least one image with data.
fn gif(bytes: &[u8]) -> Result<(), Missing> {
    let mut reader = Reader::new(bytes, 6);
    let screen = reader.take(7)?;
    if screen[4] & 0x80 != 0 {
        reader.take(3 << ((screen[4] & 0x07) + 1))?;
    }
    let mut images = 0;
    loop {
        match reader.byte()? {
            0x3B => break,
            0x21 => {
                reader.byte()?; // label
                sub_blocks(&mut reader)?;
            }
            0x2C => {
                let descriptor = reader.take(9)?;
                if descriptor[8] & 0x80 != 0 {
                    reader.take(3 << ((descriptor[8] & 0x07) + 1))?;
                }
                reader.byte()?; // LZW minimum code size
                if sub_blocks(&mut reader)? > 0 {
                    images += 1;
                }
            }
            _ => return Err(Missing::NoImageData),
        }
    }
    if images > 0 { Ok(()) } else { Err(Missing::NoImageData) }
}

/// Skips data sub-blocks up to the zero-length terminator; returns the bytes of data.
fn sub_blocks(reader: &mut Reader) -> Result<usize, Missing> {
    let mut total = 0;
    loop {
        let size = reader.byte()? as usize;
        if size == 0 {
            return Ok(total);
        }
        reader.take(size)?;
        total += size;
    }
}

/// WebP: the RIFF container whole within the bytes (its declared size), its chunks whole, and
/// a bitstream chunk among them (`VP8 `, `VP8L`, or `ANMF` frames of an animation).
fn webp(bytes: &[u8]) -> Result<(), Missing> {
    let mut header = Reader::new(bytes, 4);
    let riff_size = header.u32_le()?;
    let end = riff_size.checked_add(8).filter(|&end| end <= bytes.len()).ok_or(Missing::Truncated)?;
    let mut reader = Reader::new(&bytes[..end], 12);
    let mut image_data = false;
    while reader.at < end {
        let kind = reader.take(4)?;
        let length = reader.u32_le()?;
        reader.take(length)?;
        if length & 1 == 1 && reader.at < end {
            reader.take(1)?; // chunks are padded to an even size (a last pad byte may be left out)
        }
        if matches!(kind, b"VP8 " | b"VP8L" | b"ANMF") && length > 0 {
            image_data = true;
        }
    }
    if image_data { Ok(()) } else { Err(Missing::NoImageData) }
}
