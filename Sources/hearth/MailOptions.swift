import ArgumentParser
import HearthCore
import HearthMail
import HearthServer

/// SMTP delivery of `hearth serve` and what the account messages say: flags, then `HEARTH_*` variables,
/// then the config file. A bad URL, sender or CA file stops the start with a message naming it (a bad
/// template or public URL stops it in `buildApplication`, which checks them for the tests too).
struct MailOptions: ParsableArguments {
    @Option(help: ServeSetting.smtpUrl.help) var smtpUrl: String?
    @Option(help: ServeSetting.mailFrom.help) var mailFrom: String?
    @Option(help: ServeSetting.smtpCaFile.help) var smtpCaFile: String?
    @Option(help: ServeSetting.mailTemplates.help) var mailTemplates: String?
    @Option(help: ServeSetting.publicUrl.help) var publicUrl: String?
    @Option(help: ServeSetting.appName.help) var appName: String?

    func apply(to configuration: inout ServerConfiguration, sources: ServeSetting.Sources) throws {
        configuration.mailTemplates = sources.value(mailTemplates, .mailTemplates)
        configuration.publicURL = sources.value(publicUrl, .publicUrl)
        if let name = sources.value(appName, .appName) {
            guard !name.isEmpty, !name.contains(where: \.isNewline) else { throw ValidationError("appName must be one line of text") }
            configuration.appName = name
        }
        let url = sources.value(smtpUrl, .smtpUrl)
        let from = sources.value(mailFrom, .mailFrom)
        let caFile = sources.value(smtpCaFile, .smtpCaFile)
        guard let url, !url.isEmpty else {
            if from != nil || caFile != nil { throw ValidationError("mailFrom and smtpCaFile need smtpUrl") }
            return
        }
        guard let from, !from.isEmpty else { throw ValidationError("smtpUrl needs mailFrom, the sender of every message") }
        do throws(HearthError) {
            var settings = MailSettings(url: try SMTPURL(url), from: try MailAddress(parsing: from, field: "mailFrom"))
            if let caFile { try settings.trust(caFile: caFile) }
            configuration.mail = settings
        } catch {
            throw ValidationError(error.message)
        }
    }
}
