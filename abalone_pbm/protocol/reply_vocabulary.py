"""What mail programs add around a player's text, as data: the words the reply reader
(:mod:`.new_text`) recognises, in the languages players write in (en de fr es it pt nl
sv no da fi pl cs ru tr ja zh hu ko and a few more).

Kept apart from the reading rules so that a new client's line or a new language is one
entry here, not a new rule.  Every entry is lower case; the reader lower-cases a line
before looking it up.
"""

from __future__ import annotations

#: Verbs of an attribution line ("On ... Fred <fred@x> wrote:"), any language.  A line
#: (or two or three wrapped lines) ending with ":" that holds one of them is an
#: attribution, wherever the date and the name stand.
ATTRIBUTION_VERBS: tuple[str, ...] = (
    "wrote", "writes", "has written",
    "schrieb", "hat geschrieben",
    "a écrit", "a ecrit", "écrivait",
    "escribió", "escribio", "ha escrito", "ha escrit",
    "ha scritto", "scrisse",
    "escreveu",
    "schreef", "heeft geschreven",
    "skrev", "skrevet",
    "kirjoitti",
    "napisał", "napisała", "napisal", "napsal", "napsala", "napísal",
    "je napisao", "je napisala", "napisao",
    "написал", "написала", "написал(а)", "пишет", "писал",
    "yazdı", "yazdi",
    "írta",
    "a scris",
    "έγραψε",
    "写道", "寫道", "寫到", "写到",
    "のメッセージ", "書きました", "さんは書きました",
    "님이 작성", "작성:",
    "đã viết",
    "menulis",
    "כתב",
    "كتب",
)

#: Words an attribution line begins with ("On", "Am", "Le", "El", "Den", "W dniu" ...):
#: a wrapped attribution's first line is recognised by them.
ATTRIBUTION_OPENERS: tuple[str, ...] = (
    "on", "am", "le", "el", "il", "em", "op", "den", "dne", "d.", "w dniu", "w", "в",
    "在", "於", "于", "the",
)

#: Labels of a header block that a mail program writes above the old mail
#: ("From: ... / Sent: ... / To: ... / Subject: ..."), any language.
HEADER_LABELS: frozenset[str] = frozenset({
    # en
    "from", "sent", "date", "to", "cc", "bcc", "subject", "reply-to", "reply to",
    # de
    "von", "gesendet", "datum", "an", "betreff", "antwort an", "kopie",
    # fr
    "de", "envoyé", "envoye", "à", "a", "objet", "répondre à", "date d'envoi",
    # es
    "enviado", "enviado el", "fecha", "para", "asunto", "responder a",
    # it
    "da", "inviato", "data", "oggetto", "rispondi a",
    # pt
    "enviada", "enviada em", "enviado em", "assunto", "responder para",
    # nl
    "van", "verzonden", "aan", "onderwerp", "beantwoorden",
    # sv
    "från", "fran", "skickat", "till", "kopia", "ämne", "amne",
    # no, da
    "fra", "sendt", "dato", "til", "emne", "kopi",
    # fi
    "lähettäjä", "lähetetty", "päivämäärä", "vastaanottaja", "kopio", "aihe",
    # pl
    "od", "wysłano", "wysłany", "do", "dw", "temat",
    # cs, sk
    "odesláno", "odoslané", "komu", "předmět", "predmet",
    # ru, uk
    "от", "отправлено", "дата", "кому", "копия", "тема", "від", "надіслано",
    # tr
    "kimden", "gönderen", "gönderildi", "gönderilme", "tarih", "kime", "bilgi", "konu",
    # hu
    "feladó", "elküldve", "dátum", "címzett", "tárgy",
    # ja
    "差出人", "送信日時", "日付", "宛先", "件名", "送信者",
    # zh
    "发件人", "发送时间", "日期", "收件人", "抄送", "主题", "寄件者", "寄件日期", "收件者",
    "主旨", "副本",
    # ko
    "보낸 사람", "보낸 날짜", "받는 사람", "제목",
    # ro, hr, sr, sl, sk, bg
    "de la", "trimis", "către", "subiect", "šalje", "poslano", "prima", "za", "zadeva",
    "од", "послато", "за", "изпратено", "до", "odoslané",
    # ca
    "enviat", "enviat el", "per a", "assumpte",
    # is, et, lt, lv
    "frá", "efni", "saatja", "saadetud", "adressaat", "teema", "nuo", "išsiųsta", "kam",
    "no", "nosūtīts", "tēma",
    # el, he, ar, fa, th
    "από", "στάλθηκε", "προς", "θέμα", "מאת", "נשלח", "אל", "נושא", "من", "تم الإرسال",
    "إلى", "الموضوع", "از", "ارسال شده", "به", "موضوع", "จาก", "ส่ง", "ถึง", "เรื่อง",
    # vi, id
    "từ", "đã gửi", "đến", "chủ đề", "dari", "dikirim", "kepada", "perihal",
})

#: Labels a header block starts with (the sender), any language.
HEADER_FIRST_LABELS: frozenset[str] = frozenset({
    "from", "von", "de", "van", "från", "fran", "fra", "da", "od", "от", "від", "lähettäjä",
    "kimden", "gönderen", "feladó", "差出人", "发件人", "寄件者", "보낸 사람", "sent", "date", "gesendet",
    "envoyé", "enviado", "inviato", "verzonden", "skickat", "sendt", "datum",
    "de la", "šalje", "од", "frá", "saatja", "nuo", "από", "מאת", "من", "از", "จาก", "từ",
    "dari",
})

#: Lines that introduce a forwarded or an original message without dashes around them.
FORWARD_INTROS: tuple[str, ...] = (
    "begin forwarded message:", "anfang der weitergeleiteten nachricht:",
    "début du message réexpédié :", "début du message réexpédié:",
    "inicio del mensaje reenviado:", "inizio messaggio inoltrato:",
    "início da mensagem reencaminhada:", "begin doorgestuurd bericht:",
    "vidarebefordrat brev:", "videresendt melding:", "videresendt besked:",
    "начало переадресованного сообщения:", "転送されたメッセージ:",
)

#: Words of the client lines phones and webmailers add ("Sent from my iPhone"): a short
#: line that begins with one of these phrases...
CLIENT_LINE_OPENERS: tuple[str, ...] = (
    "sent from", "sent with", "sent via", "sent using", "sent on", "get outlook",
    "gesendet von", "gesendet mit", "gesendet vom", "gesendet über", "von meinem",
    "diese nachricht wurde von", "diese e-mail wurde von", "holen sie sich outlook",
    "envoyé de", "envoyé depuis", "envoyé à partir de", "envoyé avec", "envoye de",
    "envoye depuis", "envoye a partir de", "obtenir outlook",
    "enviado desde", "enviado do", "enviado de", "enviado com", "enviado con",
    "obtener outlook", "obter o outlook", "baixe o outlook",
    "inviato da", "inviato dal", "inviato con", "scarica outlook", "ottieni outlook",
    "verzonden vanaf", "verzonden met", "verzonden vanuit", "verstuurd vanaf",
    "verstuurd met", "verstuurd vanuit", "download outlook",
    "skickat från", "skickades från", "hämta outlook",
    "sendt fra", "sendt med", "skaff deg outlook", "hent outlook", "få outlook",
    "lähetetty", "hanki outlook",
    "wysłane z", "wysłano z", "wysłane przy", "pobierz outlook",
    "odesláno z", "odeslano z", "odoslané z", "stáhnout outlook",
    "отправлено с", "отправлено из", "отправлено через", "получить outlook",
    "скачайте outlook",
    "从我的", "发自我的", "發自我的", "寄自我的", "從我的", "由我的",
    "gửi từ", "được gửi từ", "dikirim dari", "dikirim menggunakan", "poslano s", "poslano sa",
    "poslano iz", "poslato sa", "poslato iz", "trimis de pe", "trimis din", "trimis cu",
    "elküldve", "küldve", "αποστολή από", "εστάλη από", "надіслано з", "надіслано із",
    "נשלח מ", "أرسلت من", "أُرسلت من", "مرسل من", "ส่งจาก", "enviat des de", "enviat amb",
    "saadetud", "išsiųsta iš", "nosūtīts no",
)

#: ...and names a device or a mail program (so "Sent from home" is the player's).
CLIENT_PRODUCTS: tuple[str, ...] = (
    "iphone", "ipad", "ipod", "android", "mobile", "outlook", "mail", "yahoo", "aol",
    "samsung", "galaxy", "phone", "smartphone", "tablet", "blackberry", "windows",
    "proton", "tutanota", "gmail", "huawei", "xiaomi", "pixel", "fairemail", "k-9", "k9",
    "thunderbird", "zoho", "zimbra", "courrier", "posta", "poczta", "почт", "telekom",
    "gmx", "web.de", "t-online", "libero", "appareil", "gerät", "geraet", "device",
    "telefon", "téléphone", "teléfono", "telefone", "telefoon", "apparaat", "enhet",
    "mobil", "handy", "手机", "手機", "iphonesta", "ipadista", "iphonu", "iphone'a",
    "смартфон", "телефон", "устройств", "hotmail", "ios", "macbook", "nokia", "motorola",
    "oneplus", "airmail", "bluemail", "superhuman", "fastmail", "spark",
)

#: Client lines that put the device first ("iPhoneから送信", "iPhone'umdan gönderildi",
#: "Von meinem iPhone gesendet"): a short line that ends with one of these...
CLIENT_LINE_ENDINGS: tuple[str, ...] = (
    "gesendet", "gesendet.", "から送信", "から送信しました", "发送", "發送", "gönderildi",
    "gönderildi.", "verzonden", "verstuurd", "lähetetty", "odesláno", "에서 보냄",
    "에서 보냄.", "傳送",
)

#: What a mail program writes in the text part where the HTML part shows an image
#: ("[image: logo.png]" in Gmail, "[cid:image001.png@01DB...]" in Outlook), any language:
#: a line of nothing but such placeholders is the mail program's, not the player's.
IMAGE_PLACEHOLDER_WORDS: tuple[str, ...] = (
    "image", "cid", "bild", "imagen", "immagine", "imagem", "afbeelding", "obraz",
    "obrázek", "kuva", "billede", "resim", "kép", "изображение", "зображення", "画像",
    "图片", "圖片", "이미지", "εικόνα",
)

#: File name extensions of the attachments Apple Mail names in its text part
#: ("<IMG_0042.jpeg>").
ATTACHMENT_EXTENSIONS: tuple[str, ...] = (
    "png", "jpe?g", "gif", "heic", "heif", "webp", "tiff?", "bmp", "pdf", "mov", "mp4",
    "m4a", "docx?", "xlsx?", "pptx?", "pages", "numbers", "key", "zip", "txt", "vcf", "ics",
)

#: Whole lines a corporate mail system puts above or under a text (lower case).
BANNER_WORDS: tuple[str, ...] = (
    "official use only", "internal", "confidential", "external", "extern", "externe",
    "externo", "esterno", "public", "general", "restricted", "sensitive", "unclassified",
    "classified", "non-business", "business use", "personal", "caution", "warning",
    "phish", "spam", "suspicious", "vertraulich", "intern", "öffentlich", "confidentiel",
    "interne", "confidencial", "interno", "riservato", "vertrouwelijk", "offentlig",
    "konfidentiell", "luottamuksellinen", "poufne", "důvěrné", "конфиденциально",
    "для служебного пользования", "gizli", "社外秘", "機密", "内部",
)

#: The other words of a classification line written without brackets or label
#: ("Internal Use Only", "Highly Confidential", "Nur für den internen Gebrauch"): a short
#: line of nothing but these and :data:`BANNER_WORDS` is a banner.
BANNER_LINE_WORDS: frozenset[str] = frozenset({
    "use", "only", "for", "company", "business", "non", "limited", "distribution", "data",
    "information", "level", "label", "highly", "strictly", "and", "the", "of", "internal",
    "nur", "für", "den", "internen", "gebrauch", "streng", "usage", "uniquement", "pour",
    "strictement", "uso", "solo", "exclusivo", "para", "per", "alleen", "voor", "gebruik",
    "strikt", "endast", "för", "bruk", "kun", "til", "brug", "vain", "käyttöön", "tylko",
    "do", "użytku", "wewnętrznego", "pouze", "pro", "interní", "только", "для",
    "внутреннего", "использования", "строго",
})

#: Label of a classification line ("Classification: Internal").
BANNER_LABELS: tuple[str, ...] = (
    "classification", "sensitivity", "data classification", "security classification",
    "klassifizierung", "klassifikation", "vertraulichkeit", "einstufung",
    "classificazione", "classificação", "classificacao", "clasificación", "clasificacion",
    "sensibilité", "confidentialité", "classement", "klassificering", "klassifisering",
    "luokitus", "klasyfikacja", "klasifikace", "классификация", "sınıflandırma",
)

#: A banner paragraph's first words ("CAUTION: This email originated from outside ...")
#: together with one of :data:`BANNER_MARKS` anywhere in the line.
BANNER_OPENERS: tuple[str, ...] = (
    "caution", "warning", "attention", "external email", "external sender", "external",
    "notice", "achtung", "vorsicht", "warnung", "externe e-mail", "externe email", "extern",
    "avertissement", "précaution", "precaución", "atención", "aviso", "attenzione",
    "cuidado", "atenção", "let op", "waarschuwing", "varning", "obs", "advarsel",
    "huomio", "varoitus", "uwaga", "ostrzeżenie", "upozornění", "pozor", "внимание",
    "предупреждение", "dikkat", "uyarı", "注意", "警告", "this email", "this message",
    "you don't often get email", "you don't usually receive", "some people who received",
    "sie erhalten nicht oft", "vous ne recevez pas souvent",
)
BANNER_MARKS: tuple[str, ...] = (
    "fuera de", "fora da", "fora de", "fuori dall", "hors de l", "poza", "за предел",
    "kívül", "dışından", "outside", "external", "extern", "extérieur", "exterieur", "externa", "externo",
    "esterno", "buiten", "utanför", "utenfor", "uden for", "ulkopuol", "zewnątrz",
    "zewnętrzn", "mimo", "вне", "внешн", "dışında", "外部", "organization", "organisation",
    "organisation", "unknown sender", "phishing", "do not click", "learn why this is",
    "learnaboutsenderidentification", "don't often get email", "außerhalb", "ausserhalb",
)

#: The first word of a greeting line above the move ("Hi Fred,", "Hallo!", "Bonjour").
GREETING_WORDS: frozenset[str] = frozenset({
    "hi", "hello", "hey", "hiya", "dear", "greetings", "howdy", "yo", "morning",
    "evening", "afternoon", "hallo", "hallöchen", "liebe", "lieber", "moin", "servus",
    "grüß", "grüezi", "tach", "bonjour", "bonsoir", "salut", "coucou", "cher", "chère",
    "hola", "buenas", "buenos", "querido", "querida", "estimado", "estimada", "ciao",
    "salve", "buongiorno", "buonasera", "caro", "cara", "olá", "ola", "oi", "bom", "boa",
    "hoi", "hallo,", "beste", "goedemorgen", "goedemiddag", "goedenavond", "dag", "hej",
    "hejsan", "tjena", "god", "kære", "kjære", "hei", "heippa", "moi", "terve", "hyvää",
    "cześć", "witam", "witaj", "dzień", "ahoj", "dobrý", "dobry", "zdravím", "привет",
    "здравствуй", "здравствуйте", "добрый", "доброе", "merhaba", "selam", "günaydın",
    "iyi", "sayın", "こんにちは", "こんばんは", "おはよう", "你好", "您好", "嗨",
    "안녕하세요", "szia", "helló", "jó", "good", "guten", "gutn", "sehr",
    "مرحبا", "السلام", "salam", "salaam", "namaste", "नमस्ते", "שלום", "hallå", "tere",
    "labas", "sveiki", "zdravo", "bună", "buna", "xin", "halo", "γεια", "καλημέρα",
    "καλησπέρα",
})
