/// The templates Hearth ships, each replaceable by a file of the same name (docs/messages.md lists their
/// variables). Pages extend `page`, so an operator restyles every page by replacing that one.
enum DefaultMailTemplates {
    static let sources: [MailTemplates.Name: String] = [
        .verifyEmailSubject: "Verify your email address for {{appName}}",
        .verifyEmailText: """
            Hello,

            Please confirm that {{email}} is your address by opening this link:

            {{link}}

            The link works once, for {{expiresIn}} (until {{expiresAt}}). If you did not ask for this, ignore this message.

            {{appName}}

            """,
        .verifyEmailHTML: """
            <!DOCTYPE html>
            <html lang="en">
            <body>
            <p>Hello,</p>
            <p>Please confirm that {{email}} is your address:</p>
            <p><a href="{{link}}">Verify my email address</a></p>
            <p>The link works once, for {{expiresIn}} (until {{expiresAt}}). If you did not ask for this, ignore this message.</p>
            <p>{{appName}}</p>
            </body>
            </html>

            """,
        .resetPasswordSubject: "Reset your password for {{appName}}",
        .resetPasswordText: """
            Hello,

            Someone asked to reset the password of the account for {{email}}. To choose a new one, open this link:

            {{link}}

            The link works once, for {{expiresIn}} (until {{expiresAt}}). If you did not ask for this, ignore this message: your password stays as it is.

            {{appName}}

            """,
        .resetPasswordHTML: """
            <!DOCTYPE html>
            <html lang="en">
            <body>
            <p>Hello,</p>
            <p>Someone asked to reset the password of the account for {{email}}.</p>
            <p><a href="{{link}}">Choose a new password</a></p>
            <p>The link works once, for {{expiresIn}} (until {{expiresAt}}). If you did not ask for this, ignore this message: your password stays as it is.</p>
            <p>{{appName}}</p>
            </body>
            </html>

            """,
        .page: """
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>{{$title}}{{/title}} – {{appName}}</title>
            <style>
            body { font-family: system-ui, sans-serif; line-height: 1.5; margin: 0; padding: 2rem 1rem; color: #1a1a1a; background: #fafafa; }
            main { max-width: 28rem; margin: 0 auto; }
            label { display: block; margin-top: 1rem; font-weight: 600; }
            input { font: inherit; width: 100%; box-sizing: border-box; padding: 0.5rem; margin-top: 0.25rem; border: 1px solid #555; border-radius: 4px; }
            button { font: inherit; margin-top: 1.5rem; padding: 0.5rem 1.25rem; border: 0; border-radius: 4px; background: #1f4fbf; color: #fff; }
            button:focus, input:focus { outline: 3px solid #f0b400; outline-offset: 1px; }
            .error { color: #a4000f; font-weight: 600; }
            </style>
            </head>
            <body>
            <main>
            {{$content}}{{/content}}
            </main>
            </body>
            </html>

            """,
        .pageEmailVerified: """
            {{<page}}
            {{$title}}Email address verified{{/title}}
            {{$content}}
            <h1>Email address verified</h1>
            <p>{{email}} is verified. You can close this page and go back to {{appName}}.</p>
            {{/content}}
            {{/page}}
            """,
        .pageResetPassword: """
            {{<page}}
            {{$title}}Choose a new password{{/title}}
            {{$content}}
            <h1>Choose a new password</h1>
            <p>For the account of {{email}}.</p>
            {{#error}}<p class="error" id="problem" role="alert">{{error}}</p>{{/error}}
            <form method="post" action="{{action}}">
            <input type="hidden" name="mode" value="resetPassword">
            <input type="hidden" name="code" value="{{code}}">
            <label for="newPassword">New password</label>
            <input id="newPassword" name="newPassword" type="password" autocomplete="new-password" required minlength="{{minLength}}" maxlength="{{maxLength}}" aria-describedby="rule{{#error}} problem{{/error}}">
            <p id="rule">At least {{minLength}} characters.</p>
            <label for="confirmPassword">New password again</label>
            <input id="confirmPassword" name="confirmPassword" type="password" autocomplete="new-password" required minlength="{{minLength}}" maxlength="{{maxLength}}">
            <button type="submit">Set the new password</button>
            </form>
            {{/content}}
            {{/page}}
            """,
        .pagePasswordChanged: """
            {{<page}}
            {{$title}}Password changed{{/title}}
            {{$content}}
            <h1>Password changed</h1>
            <p>The password of {{email}} is changed. Sign in to {{appName}} with the new one; every earlier sign-in has ended.</p>
            {{/content}}
            {{/page}}
            """,
        .pageLinkInvalid: """
            {{<page}}
            {{$title}}This link does not work{{/title}}
            {{$content}}
            <h1>This link does not work</h1>
            <p>The link is invalid or has already been used. Each link works once; if you still need to, ask {{appName}} for a new one.</p>
            {{/content}}
            {{/page}}
            """,
        .pageLinkExpired: """
            {{<page}}
            {{$title}}This link has expired{{/title}}
            {{$content}}
            <h1>This link has expired</h1>
            <p>Ask {{appName}} for a new one.</p>
            {{/content}}
            {{/page}}
            """,
        .pageError: """
            {{<page}}
            {{$title}}Something went wrong{{/title}}
            {{$content}}
            <h1>Something went wrong</h1>
            <p>{{message}}</p>
            {{/content}}
            {{/page}}
            """,
    ]
}
