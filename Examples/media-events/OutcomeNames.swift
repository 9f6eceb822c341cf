import ExampleSupport

// The programs' own item outcomes (ExampleSupport), not the library's playback outcomes of the
// same names, which they will move to.
typealias PlaybackOutcome = ExampleSupport.PlaybackOutcome
typealias PlaybackFailure = ExampleSupport.PlaybackFailure
