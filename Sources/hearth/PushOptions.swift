import ArgumentParser
import HearthCore
import HearthServer

/// Push delivery of `hearth serve`: APNs with token authentication, FCM with a service account; flags, then
/// `HEARTH_*` variables, then the config file. A key or credentials file that does not load stops the start
/// with a message naming it.
struct PushOptions: ParsableArguments {
    @Option(help: ServeSetting.apnsKey.help) var apnsKey: String?
    @Option(help: ServeSetting.apnsKeyId.help) var apnsKeyId: String?
    @Option(help: ServeSetting.apnsTeamId.help) var apnsTeamId: String?
    @Option(help: ServeSetting.apnsTopic.help) var apnsTopic: String?
    @Option(help: ServeSetting.apnsUrl.help) var apnsUrl: String?
    @Option(help: ServeSetting.apnsCaFile.help) var apnsCaFile: String?
    @Option(help: ServeSetting.fcmCredentials.help) var fcmCredentials: String?
    @Option(help: ServeSetting.fcmUrl.help) var fcmUrl: String?

    func apply(to configuration: inout ServerConfiguration, sources: ServeSetting.Sources) throws {
        do {
            configuration.push.apns = try apns(sources)
            if let file = sources.value(fcmCredentials, .fcmCredentials) {
                configuration.push.fcm = try FCMSettings(credentialsFile: file, url: sources.value(fcmUrl, .fcmUrl) ?? FCMSettings.production)
            } else if sources.value(fcmUrl, .fcmUrl) != nil {
                throw HearthError.invalidArgument("fcmUrl needs fcmCredentials")
            }
        } catch let error as HearthError {
            throw ValidationError(error.message)
        }
    }

    func apns(_ sources: ServeSetting.Sources) throws(HearthError) -> APNsSettings? {
        let keyID = sources.value(apnsKeyId, .apnsKeyId), teamID = sources.value(apnsTeamId, .apnsTeamId)
        let topic = sources.value(apnsTopic, .apnsTopic), url = sources.value(apnsUrl, .apnsUrl)
        let caFile = sources.value(apnsCaFile, .apnsCaFile)
        guard let file = sources.value(apnsKey, .apnsKey) else {
            if keyID != nil || teamID != nil || topic != nil || url != nil || caFile != nil {
                throw .invalidArgument("apnsKeyId, apnsTeamId, apnsTopic, apnsUrl and apnsCaFile need apnsKey")
            }
            return nil
        }
        let server: String = switch url {
        case nil, "production"?: APNsSettings.production
        case "sandbox"?, "development"?: APNsSettings.sandbox
        case let other?: other
        }
        var settings = try APNsSettings(keyFile: file, keyID: keyID ?? "", teamID: teamID ?? "", topic: topic ?? "", url: server)
        if let caFile { try settings.trust(caFile: caFile) }
        return settings
    }
}
