// A handler reads and writes with the client's types (HearthClient): one `FieldValue`, one document coding
// (`DocumentID`, `ServerTimestamp`), and a `Hearth` client for the event's token.
@_exported import struct HearthClient.DocumentDecoder
@_exported import struct HearthClient.DocumentEncoder
@_exported import struct HearthClient.DocumentID
@_exported import struct HearthClient.FieldValue
@_exported import class HearthClient.Hearth
@_exported import struct HearthClient.HearthClientError
@_exported import struct HearthClient.ServerTimestamp
