import * as z from "zod";

// Small value schemas shared by several config files.

/** An http:// or https:// URL with a host. Credentials in the URL are refused: they belong in the vault. */
export const httpUrl = z.string().superRefine((value, ctx) => {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    ctx.addIssue({ code: "custom", message: "expected an http:// or https:// URL" });
    return;
  }
  if ((url.protocol !== "http:" && url.protocol !== "https:") || url.hostname === "") {
    ctx.addIssue({ code: "custom", message: "expected an http:// or https:// URL" });
  } else if (url.username || url.password) {
    ctx.addIssue({ code: "custom", message: "credentials in the URL are not allowed; store them in the vault" });
  }
});

export const nonEmptyString = z.string().min(1, "must not be empty");
