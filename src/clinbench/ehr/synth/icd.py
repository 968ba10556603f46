"""ICD codes the generator assigns: every Charlson component in ICD-9 and ICD-10, plus acute codes.

Codes are stored without dots, as MIMIC-IV stores them. Each Charlson code sits inside the
component's code ranges of the public Charlson concept (MIT-LCP mimic-code
``comorbidity/charlson.sql``, after Quan et al. 2005); titles are the official long titles
(checked against the MIMIC-IV demo's d_icd_diagnoses / d_icd_procedures).
"""

from __future__ import annotations

# component -> (share of patients, ((icd9, title), ...), ((icd10, title), ...))
CHARLSON: dict[str, tuple[float, tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]]] = {
    "myocardial_infarct": (0.08, (("41071", "Subendocardial infarction, initial episode of care"), ("412", "Old myocardial infarction")),
                           (("I214", "Non-ST elevation (NSTEMI) myocardial infarction"), ("I252", "Old myocardial infarction"))),
    "congestive_heart_failure": (0.18, (("4280", "Congestive heart failure, unspecified"), ("42822", "Chronic systolic heart failure")),
                                 (("I509", "Heart failure, unspecified"), ("I5022", "Chronic systolic (congestive) heart failure"))),
    "peripheral_vascular_disease": (0.06, (("4439", "Peripheral vascular disease, unspecified"),),
                                    (("I739", "Peripheral vascular disease, unspecified"),)),
    "cerebrovascular_disease": (0.07, (("43491", "Cerebral artery occlusion, unspecified with cerebral infarction"),),
                                (("I639", "Cerebral infarction, unspecified"),)),
    "dementia": (0.04, (("2900", "Senile dementia, uncomplicated"),),
                 (("F0390", "Unspecified dementia without behavioral disturbance"),)),
    "chronic_pulmonary_disease": (0.15, (("49121", "Obstructive chronic bronchitis with (acute) exacerbation"),),
                                  (("J449", "Chronic obstructive pulmonary disease, unspecified"),)),
    "rheumatic_disease": (0.03, (("7140", "Rheumatoid arthritis"),), (("M069", "Rheumatoid arthritis, unspecified"),)),
    "peptic_ulcer_disease": (0.02, (("53190", "Gastric ulcer, unspecified as acute or chronic, without mention of hemorrhage or perforation, without mention of obstruction"),),
                             (("K259", "Gastric ulcer, unspecified as acute or chronic, without hemorrhage or perforation"),)),
    "mild_liver_disease": (0.05, (("5715", "Cirrhosis of liver without mention of alcohol"), ("5712", "Alcoholic cirrhosis of liver")),
                           (("K7460", "Unspecified cirrhosis of liver"), ("K7030", "Alcoholic cirrhosis of liver without ascites"))),
    "diabetes_without_cc": (0.16, (("25000", "Diabetes mellitus without mention of complication, type II or unspecified type, not stated as uncontrolled"),),
                            (("E119", "Type 2 diabetes mellitus without complications"),)),
    "diabetes_with_cc": (0.06, (("25040", "Diabetes with renal manifestations, type II or unspecified type, not stated as uncontrolled"),),
                         (("E1122", "Type 2 diabetes mellitus with diabetic chronic kidney disease"),)),
    "paraplegia": (0.02, (("3441", "Paraplegia"),), (("G8220", "Paraplegia, unspecified"),)),
    "renal_disease": (0.0, (("5853", "Chronic kidney disease, Stage III (moderate)"), ("5856", "End stage renal disease")),
                      (("N183", "Chronic kidney disease, stage 3 (moderate)"), ("N186", "End stage renal disease"))),
    "malignant_cancer": (0.08, (("1629", "Malignant neoplasm of bronchus and lung, unspecified"),),
                         (("C3490", "Malignant neoplasm of unspecified part of unspecified bronchus or lung"),)),
    "severe_liver_disease": (0.0, (("5722", "Hepatic encephalopathy"), ("4560", "Esophageal varices with bleeding")),
                             (("K7290", "Hepatic failure, unspecified without coma"), ("I8501", "Esophageal varices with bleeding"))),
    "metastatic_solid_tumor": (0.04, (("1977", "Malignant neoplasm of liver, secondary"),),
                               (("C787", "Secondary malignant neoplasm of liver and intrahepatic bile duct"),)),
    "aids": (0.01, (("042", "Human immunodeficiency virus [HIV] disease"),), (("B20", "Human immunodeficiency virus [HIV] disease"),)),
}
# renal_disease follows the patient's CKD flag and severe_liver_disease the liver-failure flag
# (both drive lab trajectories), so their shares above are 0 and the generator sets them.

# Chronic kidney disease codes read by the baseline-creatinine convention (ICD-9 585*, ICD-10 N18*).
CKD = CHARLSON["renal_disease"]

# Haematological malignancy (SAPS II): lymphoma and leukaemia.
HEME_MALIGNANCY = ((("20280", "Other malignant lymphomas, unspecified site, extranodal and solid organ sites"),
                    ("20500", "Acute myeloid leukemia, without mention of having achieved remission")),
                   (("C8590", "Non-Hodgkin lymphoma, unspecified, unspecified site"),
                    ("C9200", "Acute myeloblastic leukemia, not having achieved remission")))

# acute / background conditions: name -> ((icd9, title), (icd10, title))
ACUTE: dict[str, tuple[tuple[str, str], tuple[str, str]]] = {
    "sepsis": (("0389", "Unspecified septicemia"), ("A419", "Sepsis, unspecified organism")),
    "severe_sepsis": (("99592", "Severe sepsis"), ("R6520", "Severe sepsis without septic shock")),
    "septic_shock": (("78552", "Septic shock"), ("R6521", "Severe sepsis with septic shock")),
    "aki": (("5849", "Acute kidney failure, unspecified"), ("N179", "Acute kidney failure, unspecified")),
    "resp_failure": (("51881", "Acute respiratory failure"), ("J9600", "Acute respiratory failure, unspecified whether with hypoxia or hypercapnia")),
    "pneumonia": (("486", "Pneumonia, organism unspecified"), ("J189", "Pneumonia, unspecified organism")),
    "aspiration": (("5070", "Pneumonitis due to inhalation of food or vomitus"), ("J690", "Pneumonitis due to inhalation of food and vomit")),
    "uti": (("5990", "Urinary tract infection, site not specified"), ("N390", "Urinary tract infection, site not specified")),
}
BACKGROUND: dict[str, tuple[float, tuple[str, str], tuple[str, str]]] = {
    "hypertension": (0.45, ("4019", "Unspecified essential hypertension"), ("I10", "Essential (primary) hypertension")),
    "hyperlipidemia": (0.35, ("2724", "Other and unspecified hyperlipidemia"), ("E785", "Hyperlipidemia, unspecified")),
    "atrial_fibrillation": (0.2, ("42731", "Atrial fibrillation"), ("I4891", "Unspecified atrial fibrillation")),
    "reflux": (0.2, ("53081", "Esophageal reflux"), ("K219", "Gastro-esophageal reflux disease without esophagitis")),
    "anemia": (0.2, ("2859", "Anemia, unspecified"), ("D649", "Anemia, unspecified")),
    "hypothyroidism": (0.1, ("2449", "Unspecified acquired hypothyroidism"), ("E039", "Hypothyroidism, unspecified")),
    "depression": (0.12, ("311", "Depressive disorder, not elsewhere classified"), ("F329", "Major depressive disorder, single episode, unspecified")),
    "tobacco": (0.15, ("3051", "Tobacco use disorder"), ("F17210", "Nicotine dependence, cigarettes, uncomplicated")),
    "hyponatremia": (0.08, ("2761", "Hyposmolality and/or hyponatremia"), ("E871", "Hypo-osmolality and hyponatremia")),
    "anticoagulants": (0.1, ("V5861", "Long-term (current) use of anticoagulants"), ("Z7901", "Long term (current) use of anticoagulants")),
}

# procedures: name -> ((icd9, title), (icd10, title))
PROCEDURES: dict[str, tuple[tuple[str, str], tuple[str, str]]] = {
    "intubation": (("9604", "Insertion of endotracheal tube"), ("0BH17EZ", "Insertion of Endotracheal Airway into Trachea, Via Natural or Artificial Opening")),
    "vent_short": (("9671", "Continuous invasive mechanical ventilation for less than 96 consecutive hours"), ("5A1945Z", "Respiratory Ventilation, 24-96 Consecutive Hours")),
    "vent_long": (("9672", "Continuous invasive mechanical ventilation for 96 consecutive hours or more"), ("5A1955Z", "Respiratory Ventilation, Greater than 96 Consecutive Hours")),
    "dialysis": (("3995", "Hemodialysis"), ("5A1D90Z", "Performance of Urinary Filtration, Continuous, Greater than 18 hours Per Day")),
    "central_line": (("3893", "Venous catheterization, not elsewhere classified"), ("02HV33Z", "Insertion of Infusion Device into Superior Vena Cava, Percutaneous Approach")),
}


def diagnosis_dictionary() -> list[tuple[str, int, str]]:
    """(icd_code, icd_version, long_title) for every diagnosis code the generator can assign."""
    rows: dict[tuple[str, int], str] = {}
    for _, nine, ten in CHARLSON.values():
        rows.update({(c, 9): t for c, t in nine})
        rows.update({(c, 10): t for c, t in ten})
    for version, codes in zip((9, 10), HEME_MALIGNANCY):
        rows.update({(c, version): t for c, t in codes})
    for nine, ten in ACUTE.values():
        rows[(nine[0], 9)] = nine[1]
        rows[(ten[0], 10)] = ten[1]
    for _, nine, ten in BACKGROUND.values():
        rows[(nine[0], 9)] = nine[1]
        rows[(ten[0], 10)] = ten[1]
    return [(c, v, t) for (c, v), t in sorted(rows.items())]


def procedure_dictionary() -> list[tuple[str, int, str]]:
    rows = {}
    for nine, ten in PROCEDURES.values():
        rows[(nine[0], 9)] = nine[1]
        rows[(ten[0], 10)] = ten[1]
    return [(c, v, t) for (c, v), t in sorted(rows.items())]
