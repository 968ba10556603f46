"""Case records in the layouts real datasets use, written for these tests (no MIMIC text).

Each layout holds a record and what it says for each test: ``HOLDS`` maps an order (as a
clinician types it) to words the served reply must contain, copied from the record.
``STATED_NORMAL`` lists orders the record answers only with "normal"/"negative" (or not at
all) whose reply must not contradict that. Layouts:

* ``demo``: the bundled cases' ``Heading:`` + ``Name: result`` lines;
* ``mimic_note``: a MIMIC-IV-Note discharge summary (``___`` placeholders, ``Pertinent
  Results:`` lab strings, ``CXR ___: IMPRESSION:``, ``CT HEAD W/O CONTRAST ___ FINDINGS:``,
  microbiology lines);
* ``test_results``: a ``TEST RESULTS`` heading with ``Name:`` lines followed by indented
  ``Findings:`` or ``key: value`` lines (the issue's hypertrophic cardiomyopathy case);
* ``free_paragraphs``: results as ``Name: value`` inside running prose.
"""

from __future__ import annotations

from clinbench.dx.cases import Case

MIMIC_NOTE = """\
Name:  ___                    Unit No:   ___
Admission Date:  ___              Discharge Date:   ___
Date of Birth:  ___             Sex:   F
Service: MEDICINE
Allergies: Patient recorded as having No Known Allergies to Drugs
Attending: ___.

Chief Complaint:
fever, confusion

Major Surgical or Invasive Procedure:
None

History of Present Illness:
Ms. ___ is a ___ woman with hypertension who was found confused at home by her daughter. She had two days of
fevers to 102 and dysuria. In the ED, initial vitals: T 101.8 HR 112 BP 96/58 RR 22 O2 95% RA.

Past Medical History:
Hypertension, hyperlipidemia, osteoarthritis.

Social History:
___
Family History:
Mother with diabetes.

Physical Exam:
ADMISSION PHYSICAL EXAM:
VS: T 101.2 BP 102/60 HR 108 RR 20 O2 96% RA
GEN: ill-appearing, oriented to self only
ABD: soft, mild suprapubic tenderness, right CVA tenderness

Pertinent Results:
ADMISSION LABS:
___ 04:50PM BLOOD WBC-11.2* RBC-3.89* Hgb-11.8* Hct-35.5* MCV-91 MCH-30.3 MCHC-33.2 RDW-13.1 Plt Ct-245
___ 04:50PM BLOOD Neuts-84.0* Lymphs-8.1* Monos-6.2 Eos-0.9 Baso-0.3
___ 04:50PM BLOOD PT-12.1 PTT-30.2 INR(PT)-1.1
___ 04:50PM BLOOD Glucose-124* UreaN-18 Creat-0.9 Na-137 K-4.1 Cl-101 HCO3-24 AnGap-16
___ 04:50PM BLOOD ALT-25 AST-30 AlkPhos-80 TotBili-0.5
___ 04:50PM BLOOD Lipase-45
___ 04:50PM BLOOD cTropnT-<0.01
___ 04:50PM BLOOD proBNP-1234*
___ 04:55PM BLOOD Lactate-2.1*
___ 05:10PM BLOOD Type-ART pO2-85 pCO2-40 pH-7.40 calTCO2-25 Base XS-0
___ 05:30PM URINE Color-Yellow Appear-Cloudy Sp ___
___ 05:30PM URINE Blood-SM Nitrite-POS Protein-30 Glucose-NEG Ketone-NEG Leuks-LG
DISCHARGE LABS:
___ 06:10AM BLOOD WBC-7.9 RBC-3.70* Hgb-11.0* Hct-33.9* Plt Ct-230
___ 06:10AM BLOOD Glucose-98 UreaN-12 Creat-0.7 Na-139 K-3.9 Cl-104 HCO3-25 AnGap-14

MICROBIOLOGY:
___ BLOOD CULTURE Blood Culture, Routine-FINAL NO GROWTH
___ URINE CULTURE-FINAL {ESCHERICHIA COLI} >100,000 CFU/mL

IMAGING:
CXR ___: IMPRESSION: No acute cardiopulmonary process.
CT HEAD W/O CONTRAST ___ FINDINGS: There is no evidence of hemorrhage, edema, mass effect or acute
large territorial infarction. The ventricles and sulci are normal in size. IMPRESSION: No acute
intracranial process.
RENAL U/S ___: The right kidney measures 11.2 cm with mild perinephric stranding; no hydronephrosis.

Brief Hospital Course:
___ woman admitted with sepsis from a urinary source, treated with ceftriaxone.

Discharge Diagnosis:
Acute pyelonephritis

Discharge Condition:
Mental Status: Clear and coherent.
"""

TEST_RESULTS = """\
A 24-year-old man collapsed while playing football; he recovered within a minute.

HISTORY OF PRESENT ILLNESS
He has had exertional chest tightness and palpitations for a year. His uncle died suddenly at 35.

PHYSICAL EXAMINATION
Harsh systolic murmur at the left sternal edge, louder on standing. Blood pressure 124/76 mmHg.

TEST RESULTS
ECG:
    Findings: Normal sinus rhythm with possible left ventricular hypertrophy
Echocardiogram:
    Findings: Left ventricular hypertrophy with asymmetrical septal thickening
Complete Blood Count: Normal
Basic Metabolic Panel:
    Sodium: 139 mmol/L
    Potassium: 4.2 mmol/L
    Creatinine: 0.9 mg/dL
Troponin:
    Findings: Negative
Cardiac MRI:
    Findings: Septal thickness 21 mm with patchy late gadolinium enhancement
    Impression: Consistent with the clinical suspicion

FINAL DIAGNOSIS
Hypertrophic cardiomyopathy
"""

FREE_PARAGRAPHS = """\
A 71-year-old woman presents with sudden breathlessness and right calf swelling after a long flight.

History of present illness:
Three days after flying back from Australia she noticed her right calf was swollen. This morning she became
suddenly breathless.

Physical examination:
Heart rate 118, respiratory rate 26, oxygen saturation 89% on air. Right calf 3 cm larger than left.

Pertinent results:
Bloods on arrival were taken. D-dimer: 4.2 mg/L FEU, well above the cut-off, and Troponin I: 0.09 ng/mL was
mildly raised. An arterial blood gas on air showed pH: 7.47, pO2: 8.1 kPa and pCO2: 4.0 kPa. Urinalysis:
negative. Chest radiograph: clear lung fields, no effusion. The CT pulmonary angiogram showed filling defects
in both main pulmonary arteries. Liver function tests: normal.

Hospital course:
Anticoagulated with apixaban.

Discharge diagnosis:
Acute bilateral pulmonary embolism
"""


def _case(case_id: int, diagnosis: str, summary: str, full_text: str) -> Case:
    return Case(case_id=case_id, mimic_note_id=f"layout-{case_id}", final_diagnosis=diagnosis,
                case_title=diagnosis, case_summary=summary, full_text=full_text,
                estimated_clinician_visits=1, tests=[], case_sets=["test"], synthetic=True)


def mimic_note_case() -> Case:
    summary = "An older woman is brought in confused with two days of fever and burning on urination."
    return _case(9001, "Acute pyelonephritis", summary, summary + "\n\n" + MIMIC_NOTE)


def results_heading_case() -> Case:
    return _case(9002, "Hypertrophic cardiomyopathy", TEST_RESULTS.splitlines()[0], TEST_RESULTS)


def free_paragraphs_case() -> Case:
    return _case(9003, "Acute bilateral pulmonary embolism", FREE_PARAGRAPHS.splitlines()[0], FREE_PARAGRAPHS)


# order -> words of the record the reply must contain
MIMIC_HOLDS = {
    "complete blood count": ["WBC-11.2*", "Hgb-11.8*", "Hct-35.5*", "Plt Ct-245"],
    "CBC with differential": ["WBC-11.2*", "Neuts-84.0*"],
    "white blood cell count": ["WBC-11.2*"],
    "hemoglobin": ["Hgb-11.8*"],
    "hematocrit": ["Hct-35.5*"],
    "platelet count": ["Plt Ct-245"],
    "basic metabolic panel": ["Na-137", "K-4.1", "HCO3-24", "UreaN-18", "Creat-0.9", "Glucose-124*"],
    "comprehensive metabolic panel": ["Na-137", "Creat-0.9", "ALT-25", "AlkPhos-80", "TotBili-0.5"],
    "sodium": ["Na-137"],
    "serum potassium": ["K-4.1"],
    "BUN": ["UreaN-18"],
    "creatinine": ["Creat-0.9"],
    "bicarbonate": ["HCO3-24"],
    "anion gap": ["AnGap-16"],
    "glucose": ["Glucose-124*"],
    "liver function tests": ["ALT-25", "AST-30", "AlkPhos-80", "TotBili-0.5"],
    "ALT": ["ALT-25"],
    "aspartate aminotransferase": ["AST-30"],
    "alkaline phosphatase": ["AlkPhos-80"],
    "total bilirubin": ["TotBili-0.5"],
    "lipase": ["Lipase-45"],
    "troponin T": ["cTropnT-<0.01"],
    "troponin": ["cTropnT-<0.01"],
    "NT-proBNP": ["proBNP-1234*"],
    "BNP": ["proBNP-1234*"],
    "lactate": ["Lactate-2.1*"],
    "arterial blood gas": ["pO2-85", "pCO2-40", "pH-7.40"],
    "coagulation panel": ["PT-12.1", "PTT-30.2", "INR(PT)-1.1"],
    "INR": ["INR(PT)-1.1"],
    "urinalysis": ["Nitrite-POS", "Leuks-LG"],
    "blood culture": ["NO GROWTH"],
    "urine culture": ["ESCHERICHIA COLI", "100,000"],
    "chest x-ray": ["No acute cardiopulmonary process"],
    "CT head without contrast": ["no evidence of hemorrhage"],
    "renal ultrasound": ["11.2 cm", "perinephric stranding"],
}
TEST_RESULTS_HOLDS = {
    "ECG": ["Normal sinus rhythm with possible left ventricular hypertrophy"],
    "12-lead electrocardiogram": ["Normal sinus rhythm with possible left ventricular hypertrophy"],
    "transthoracic echocardiogram": ["Left ventricular hypertrophy with asymmetrical septal thickening"],
    "complete blood count": ["Normal"],
    "CBC": ["Normal"],
    "basic metabolic panel": ["139 mmol/L", "4.2 mmol/L", "0.9 mg/dL"],
    "potassium": ["4.2 mmol/L"],
    "troponin I": ["Negative"],
    "cardiac MRI": ["Septal thickness 21 mm"],
}
FREE_HOLDS = {
    "D-dimer": ["4.2 mg/L"],
    "troponin": ["0.09 ng/mL"],
    "ABG": ["7.47", "8.1 kPa", "4.0 kPa"],
    "urinalysis": ["negative"],
    "chest x-ray": ["clear lung fields"],
    "CTPA": ["filling defects"],
    "LFTs": ["normal"],
}
# orders whose reply must not contradict a "normal"/"negative" the record states (or holds nothing of)
STATED_NORMAL = {
    "test_results": ["complete blood count", "hemoglobin", "white cell count", "platelets", "troponin T"],
    "free_paragraphs": ["liver function tests", "ALT", "bilirubin", "urinalysis", "urine dipstick"],
}
