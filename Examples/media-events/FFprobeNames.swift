/// libvlc's names for codecs, containers and pixel formats, translated into the names
/// ffprobe prints (`codec_name`, `format_name`, `pix_fmt`), so that a script written for one
/// reads the other. A name libvlc has and ffprobe has not (or that this table does not know)
/// gives `nil`: the probe prints `null` rather than a guess.
enum FFprobeNames {
    /// ffprobe's `codec_name` for libvlc's FourCC (trimmed: `mp3`, not `mp3 `).
    ///
    /// `mpga` is MPEG audio whose layer libvlc's track list does not tell (Matroska's
    /// `A_MPEG/L3`, MP4's `.mp3`): in practice layer 3, so `mp3`. `subt` is libvlc's plain text
    /// subtitle, from SubRip files and Matroska's `S_TEXT/UTF8`, which ffprobe calls `subrip`.
    static func codecName(fourCC: String) -> String? {
        codecs[fourCC]
    }

    private static let codecs: [String: String] = [
        // Video
        "h264": "h264", "avc1": "h264", "hevc": "hevc", "VP80": "vp8", "VP90": "vp9", "av01": "av1",
        "mp4v": "mpeg4", "mpgv": "mpeg2video", "mp1v": "mpeg1video", "mp2v": "mpeg2video", "theo": "theora",
        "MJPG": "mjpeg", "mjpg": "mjpeg", "WVC1": "vc1", "WMV3": "wmv3", "WMV2": "wmv2", "WMV1": "wmv1",
        "h263": "h263", "dv": "dvvideo", "png": "png", "jpeg": "mjpeg", "gif": "gif", "FFV1": "ffv1",
        "drac": "dirac", "VP60": "vp6", "VP6F": "vp6f", "FLV1": "flv1", "prores": "prores", "apcn": "prores",
        // Audio
        "mp4a": "aac", "mp3": "mp3", "mpga": "mp3", "mp2": "mp2", "Opus": "opus", "vorb": "vorbis",
        "flac": "flac", "alac": "alac", "a52": "ac3", "eac3": "eac3", "dts": "dts", "mlp": "mlp",
        "trhd": "truehd", "spx": "speex", "spxr": "speex", "wma1": "wmav1", "wma2": "wmav2", "wmap": "wmapro",
        "samr": "amr_nb", "sawb": "amr_wb", "APE": "ape", "WVPK": "wavpack", "TTA1": "tta", "gsm": "gsm",
        "s16l": "pcm_s16le", "s16b": "pcm_s16be", "s24l": "pcm_s24le", "s24b": "pcm_s24be",
        "s32l": "pcm_s32le", "s32b": "pcm_s32be", "u8": "pcm_u8", "s8": "pcm_s8", "f32l": "pcm_f32le",
        "f32b": "pcm_f32be", "f64l": "pcm_f64le", "f64b": "pcm_f64be", "alaw": "pcm_alaw", "ulaw": "pcm_mulaw",
        // Subtitles
        "subt": "subrip", "ssa": "ass", "tx3g": "mov_text", "wvtt": "webvtt", "WVTT": "webvtt",
        "dvbs": "dvb_subtitle", "spu": "dvd_subtitle", "pgs": "hdmv_pgs_subtitle", "c608": "eia_608",
        "ttml": "ttml", "mpvs": "microdvd",
    ]

    /// ffprobe's `format_name` for the libvlc demuxer `module` that opened the input (the
    /// `using demux module "…"` of libvlc's log). libvlc's `es` demuxer reads every
    /// elementary stream file (MP3, ADTS AAC, AC-3, …): the first audio codec tells which.
    static func formatName(demuxer module: String, firstCodec: String?) -> String? {
        if module == "es" || module == "h26x" {
            switch firstCodec {
            case "mp3", "mpga": return "mp3"
            case "mp4a": return "aac"
            case "a52": return "ac3"
            case "eac3": return "eac3"
            case "dts": return "dts"
            case "mlp": return "mlp"
            case "trhd": return "truehd"
            case "h264": return "h264"
            case "hevc": return "hevc"
            case "mp4v": return "m4v"
            default: return nil
            }
        }
        return formats[module]
    }

    private static let formats: [String: String] = [
        "mkv": "matroska,webm", "mp4": "mov,mp4,m4a,3gp,3g2,mj2", "ogg": "ogg", "flacsys": "flac",
        "wav": "wav", "avi": "avi", "ts": "mpegts", "ps": "mpeg", "asf": "asf", "aiff": "aiff", "au": "au",
        "voc": "voc", "mpgv": "mpegvideo", "caf": "caf", "mpc": "mpc", "rawdv": "dv", "rawvid": "rawvideo",
        "webvtt": "webvtt", "subtitle": "srt", "smf": "smf", "real": "rm", "nsv": "nsv", "nuv": "nuv",
        "vobsub": "vobsub", "image": "image2", "xa": "xa", "vc1": "vc1", "mod": "libmodplug",
    ]

    /// ffprobe's `pix_fmt` for a libvlc chroma FourCC (the `4cc` of libvlc's video output
    /// format line), `nil` for a hardware surface or a chroma the table does not know.
    static func pixelFormat(chroma: String) -> String? {
        chromas[chroma]
    }

    private static let chromas: [String: String] = [
        "I420": "yuv420p", "J420": "yuvj420p", "YV12": "yuv420p", "I422": "yuv422p", "J422": "yuvj422p",
        "I444": "yuv444p", "J444": "yuvj444p", "I440": "yuv440p", "I410": "yuv410p", "I411": "yuv411p",
        "I0AL": "yuv420p10le", "I0AB": "yuv420p10be", "I2AL": "yuv422p10le", "I4AL": "yuv444p10le",
        "I0CL": "yuv420p12le", "I2CL": "yuv422p12le", "I4CL": "yuv444p12le", "I0FL": "yuv420p16le",
        "NV12": "nv12", "NV21": "nv21", "NV16": "nv16", "P010": "p010le", "YUYV": "yuyv422", "UYVY": "uyvy422",
        "GBR8": "gbrp", "GBAl": "gbrap10le", "GBAL": "gbrap", "GBrL": "gbrp10le", "GBrB": "gbrp10be",
        "GREY": "gray", "RV24": "rgb24", "RV32": "bgra", "RGBA": "rgba", "BGRA": "bgra", "ARGB": "argb",
        "YUVA": "yuva444p", "I40A": "yuva420p", "RGBP": "pal8", "RV16": "rgb565le", "RV15": "rgb555le",
    ]
}
