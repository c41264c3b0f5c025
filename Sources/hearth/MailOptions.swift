import ArgumentParser
import HearthCore
import HearthMail
import HearthServer

/// SMTP delivery of `hearth serve`: flags, then `HEARTH_*` variables, then the config file. A bad URL,
/// sender or CA file stops the start with a message naming it.
struct MailOptions: ParsableArguments {
    @Option(help: ServeSetting.smtpUrl.help) var smtpUrl: String?
    @Option(help: ServeSetting.mailFrom.help) var mailFrom: String?
    @Option(help: ServeSetting.smtpCaFile.help) var smtpCaFile: String?

    func apply(to configuration: inout ServerConfiguration, sources: ServeSetting.Sources) throws {
        let url = sources.value(smtpUrl, .smtpUrl)
        let from = sources.value(mailFrom, .mailFrom)
        let caFile = sources.value(smtpCaFile, .smtpCaFile)
        guard let url, !url.isEmpty else {
            if from != nil || caFile != nil { throw ValidationError("mailFrom and smtpCaFile need smtpUrl") }
            return
        }
        guard let from, !from.isEmpty else { throw ValidationError("smtpUrl needs mailFrom, the sender of every message") }
        do {
            var settings = MailSettings(url: try SMTPURL(url), from: try MailAddress(parsing: from, field: "mailFrom"))
            if let caFile { try settings.trust(caFile: caFile) }
            configuration.mail = settings
        } catch let error as HearthError {
            throw ValidationError(error.message)
        } catch {
            throw ValidationError("smtpCaFile \(caFile ?? ""): \(error)")
        }
    }
}
