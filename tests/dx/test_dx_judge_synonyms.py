"""The offline judge and the names clinicians give the 68 ED diagnoses (data/ed_diagnoses.csv).

Each fact is a verdict a clinician would give: a (reference, candidate, correct) triple, correct meaning a score
of 4 or 5. Before the fix, an audit of 249 phrasings an agent could answer with (2-4 for each ED diagnosis)
found 76 scored 3 or less for their own reference and one scored correct for another ("Stomach flu" 5 for
Influenza); "Renal colic" scored 2 for a ureteral stone, and "Acute aortic dissection due to Abdominal aortic
aneurysm rupture" 5 for both the dissection and the ruptured aneurysm.
"""

from __future__ import annotations

import csv
from importlib import resources

import pytest

from clinbench.dx.judge import OfflineJudge


@pytest.fixture(scope="module")
def judge():
    return OfflineJudge()


def _ed_diagnoses() -> list[str]:
    with (resources.files("clinbench.dx") / "data" / "ed_diagnoses.csv").open(encoding="utf-8") as fh:
        return [r["diagnosis"] for r in csv.DictReader(fh)]


# Phrasings a clinician counts correct for each ED diagnosis (abbreviations, eponyms, lay and syndrome names,
# a kind of the disease). Phrasings the judge still scores 3 or less, judged ambiguous or left, are not here:
# Gallstones, Ascending cholangitis, Infectious diarrhea, Kidney stone and Nephrolithiasis for a ureteral
# stone, Acute cardiogenic pulmonary edema, Reflex syncope, Malignant hypertension, CAP, HONK, Hashimoto
# thyroiditis, Ruptured cerebral aneurysm, Hemorrhagic stroke, Convulsion, Fit, Septic knee, Intracapsular hip
# fracture, Iron deficiency, Microcytic anemia, Anemia due to chronic blood loss, Alcoholic steatohepatitis,
# Severe allergic reaction, Bowel ischemia, Ischemic bowel, Superior mesenteric artery occlusion, Hydrothorax,
# Influenza-like illness, Meningitis.
ED_SYNONYMS = {
    "Acute appendicitis": ["Appendicitis", "Acute suppurative appendicitis", "Inflamed appendix"],
    "Acute cholecystitis": ["Acute calculous cholecystitis", "Cholecystitis", "Gallbladder inflammation"],
    "Biliary colic": ["Symptomatic cholelithiasis", "Gallstone colic", "Cholelithiasis", "Symptomatic gallstones"],
    "Choledocholithiasis with cholangitis": ["Acute cholangitis due to common bile duct stone",
                                             "Common bile duct stone with cholangitis", "CBD stone with cholangitis"],
    "Acute pancreatitis": ["Pancreatitis", "Gallstone pancreatitis", "Alcoholic pancreatitis"],
    "Small bowel obstruction": ["SBO", "Adhesive small bowel obstruction", "Bowel obstruction", "Intestinal obstruction"],
    "Acute diverticulitis": ["Diverticulitis", "Sigmoid diverticulitis", "Acute uncomplicated diverticulitis"],
    "Bleeding peptic ulcer": ["Upper GI bleed from peptic ulcer", "Bleeding duodenal ulcer", "Peptic ulcer hemorrhage",
                              "Bleeding gastric ulcer"],
    "Acute gastroenteritis": ["Gastroenteritis", "Viral gastroenteritis", "Stomach flu"],
    "Clostridioides difficile colitis": ["C. diff colitis", "C difficile infection", "Pseudomembranous colitis", "CDI"],
    "Ruptured ectopic pregnancy": ["Ruptured ectopic", "Ruptured tubal pregnancy", "Ectopic pregnancy"],
    "Ovarian torsion": ["Adnexal torsion", "Torsion of the ovary", "Torsed ovary"],
    "Acute pyelonephritis": ["Pyelonephritis", "Kidney infection", "Upper urinary tract infection"],
    "Urinary tract infection": ["UTI", "Cystitis", "Acute cystitis", "Lower urinary tract infection"],
    "Ureteral calculus": ["Renal colic", "Ureteric colic", "Ureterolithiasis", "Ureteric stone", "Obstructing ureteral stone",
                          "Urolithiasis", "Renal colic due to a ureteral stone"],
    "Acute kidney injury": ["AKI", "Acute renal failure", "Prerenal azotemia", "Acute renal injury"],
    "ST elevation myocardial infarction": ["STEMI", "Acute ST-elevation MI", "Acute inferior STEMI", "Heart attack"],
    "Non-ST elevation myocardial infarction": ["NSTEMI", "Non-ST-elevation myocardial infarction", "Acute NSTEMI",
                                               "Non-STEMI"],
    "Unstable angina": ["Unstable angina pectoris", "Crescendo angina", "Preinfarction angina"],
    "Acute pericarditis": ["Pericarditis", "Acute viral pericarditis", "Acute idiopathic pericarditis"],
    "Acute aortic dissection": ["Aortic dissection", "Type A aortic dissection", "Dissecting aortic aneurysm",
                                "Thoracic aortic dissection"],
    "Acute pulmonary embolism": ["PE", "Pulmonary embolism", "Pulmonary embolus", "Saddle pulmonary embolism",
                                 "Pulmonary thromboembolism"],
    "Deep vein thrombosis of the lower extremity": ["DVT", "Left femoral deep vein thrombosis", "Leg DVT",
                                                    "Popliteal vein thrombosis"],
    "Acute decompensated heart failure": ["CHF exacerbation", "Heart failure exacerbation", "Acute heart failure",
                                          "Decompensated congestive heart failure"],
    "Atrial fibrillation with rapid ventricular response": ["AF with RVR", "Rapid AF", "Atrial fibrillation",
                                                            "Afib with RVR"],
    "Complete heart block": ["Third-degree AV block", "CHB", "Complete atrioventricular block", "Third degree heart block"],
    "Supraventricular tachycardia": ["SVT", "AVNRT", "Paroxysmal supraventricular tachycardia", "PSVT"],
    "Vasovagal syncope": ["Neurocardiogenic syncope", "Simple faint", "Vasovagal episode"],
    "Hypertensive emergency": ["Hypertensive crisis", "Hypertensive encephalopathy"],
    "Community-acquired pneumonia": ["Pneumonia", "Lobar pneumonia", "Right lower lobe pneumonia"],
    "Acute exacerbation of chronic obstructive pulmonary disease": ["COPD exacerbation", "AECOPD",
                                                                    "Acute exacerbation of COPD",
                                                                    "Infective exacerbation of COPD"],
    "Acute asthma exacerbation": ["Asthma attack", "Status asthmaticus", "Acute severe asthma", "Asthma exacerbation"],
    "Spontaneous pneumothorax": ["Pneumothorax", "Primary spontaneous pneumothorax", "Collapsed lung", "PTX"],
    "Influenza": ["Flu", "Influenza A", "Seasonal influenza"],
    "Diabetic ketoacidosis": ["DKA", "Type 1 diabetes mellitus with ketoacidosis", "Diabetic ketoacidosis in type 1 diabetes"],
    "Hyperosmolar hyperglycemic state": ["HHS", "Hyperosmolar hyperglycemic nonketotic state",
                                         "Hyperosmolar nonketotic hyperglycemia"],
    "Hypoglycemia": ["Low blood sugar", "Insulin-induced hypoglycemia", "Hypoglycaemia"],
    "Hyponatremia": ["Low sodium", "Hypotonic hyponatremia", "Thiazide-induced hyponatremia"],
    "Hyperkalemia": ["High potassium", "Hyperkalaemia", "Severe hyperkalemia"],
    "Thyrotoxicosis": ["Hyperthyroidism", "Graves disease", "Graves' disease", "Overactive thyroid"],
    "Hypothyroidism": ["Underactive thyroid", "Myxedema"],
    "Adrenal insufficiency": ["Addison disease", "Addison's disease", "Adrenal crisis", "Hypoadrenalism",
                              "Primary adrenal insufficiency"],
    "Acute ischemic stroke": ["Ischemic stroke", "Stroke", "CVA", "Cerebrovascular accident", "Cerebral infarction",
                              "Left MCA stroke"],
    "Transient ischemic attack": ["TIA", "Transient ischaemic attack", "Mini-stroke"],
    "Subarachnoid hemorrhage": ["SAH", "Aneurysmal subarachnoid hemorrhage", "Subarachnoid bleed"],
    "Intracerebral hemorrhage": ["Intracerebral bleed", "Intraparenchymal hemorrhage"],
    "Migraine": ["Migraine headache", "Migraine with aura", "Classic migraine", "Acute migraine attack"],
    "Bacterial meningitis": ["Pneumococcal meningitis", "Acute bacterial meningitis"],
    "Viral encephalitis": ["HSV encephalitis", "Herpes simplex encephalitis", "Encephalitis", "Viral meningoencephalitis"],
    "Seizure": ["Generalized tonic-clonic seizure", "Epileptic seizure"],
    "Sepsis": ["Septicemia", "Septic shock", "Urosepsis"],
    "Cellulitis of the lower limb": ["Leg cellulitis", "Cellulitis", "Lower extremity cellulitis", "Cellulitis of the right leg"],
    "Septic arthritis": ["Infectious arthritis", "Pyogenic arthritis", "Staphylococcal septic arthritis of the knee"],
    "Gout flare": ["Acute gout", "Gout attack", "Acute gouty arthritis", "Podagra"],
    "Fracture of the neck of femur": ["Hip fracture", "Femoral neck fracture", "Fractured neck of femur"],
    "Rhabdomyolysis": ["Rhabdo", "Exertional rhabdomyolysis", "Acute rhabdomyolysis"],
    "Immune thrombocytopenia": ["ITP", "Immune thrombocytopenic purpura", "Idiopathic thrombocytopenic purpura",
                                "Autoimmune thrombocytopenia"],
    "Iron deficiency anemia": ["Iron deficiency anaemia"],
    "Alcoholic hepatitis": ["Alcohol-related hepatitis", "Acute alcoholic hepatitis"],
    "Decompensated alcoholic cirrhosis": ["Alcoholic cirrhosis with ascites", "Decompensated cirrhosis",
                                          "Alcoholic liver cirrhosis"],
    "Acetaminophen overdose": ["Paracetamol overdose", "Tylenol overdose", "Acetaminophen toxicity",
                               "Intentional acetaminophen poisoning"],
    "Alcohol withdrawal": ["Alcohol withdrawal syndrome", "Delirium tremens", "EtOH withdrawal"],
    "Anaphylaxis": ["Anaphylactic reaction", "Anaphylactic shock", "Food anaphylaxis"],
    "Herpes zoster": ["Shingles", "Zoster", "Herpes zoster of thoracic dermatome", "VZV reactivation"],
    "Abdominal aortic aneurysm rupture": ["Ruptured AAA", "Ruptured abdominal aortic aneurysm",
                                          "Leaking abdominal aortic aneurysm"],
    "Mesenteric ischemia": ["Acute mesenteric ischemia"],
    "Testicular torsion": ["Torsion of the testis", "Spermatic cord torsion", "Torsed testicle", "Left testicular torsion"],
    "Pleural effusion": ["Right pleural effusion", "Bilateral pleural effusions"],
}
# A phrasing correct for another ED diagnosis than its own, as a clinician would also count it.
ALSO_CORRECT = {("Heart attack", "Non-ST elevation myocardial infarction"),
                ("Cystitis", "Urinary tract infection"), ("Acute cystitis", "Urinary tract infection")}


def test_the_synonym_list_covers_every_ed_diagnosis():
    assert set(ED_SYNONYMS) == set(_ed_diagnoses()) and len(ED_SYNONYMS) == 68


@pytest.mark.parametrize("reference, candidate",
                         [(ref, syn) for ref, syns in ED_SYNONYMS.items() for syn in syns])
def test_a_synonym_is_correct_for_its_ed_diagnosis(judge, reference, candidate):
    assert judge.score(reference, candidate).correct


def test_no_synonym_is_correct_for_another_ed_diagnosis(judge):
    # 228 phrasings against the 67 other ED diagnoses each (about 5 s)
    names = _ed_diagnoses()
    wrong = [(ref, syn, other) for ref, syns in ED_SYNONYMS.items() for syn in syns for other in names
             if other != ref and (syn, other) not in ALSO_CORRECT and judge.score(other, syn).correct]
    assert wrong == []


FACTS = [
    # renal colic is an obstructing urinary stone's colic: correct for the stone, never for what mimics it
    ("Ureteral calculus", "Renal colic", True),
    ("Ureteral calculus", "Left renal colic", True),
    ("Obstructing left ureteral calculus", "Left renal colic", True),
    ("Obstructing left ureteral calculus", "Right renal colic", False),
    ("Kidney stone", "Renal colic", True),
    ("Renal colic", "Ureteral calculus", True),
    ("Acute pyelonephritis", "Renal colic", False),
    ("Abdominal aortic aneurysm rupture", "Renal colic", False),
    ("Acute type B aortic dissection", "Renal colic", False),
    ("Acute appendicitis", "Renal colic", False),
    ("Acute appendicitis", "Right ureteric colic", False),
    ("Urinary tract infection", "Renal colic", False),
    ("Acute kidney injury", "Renal colic", False),
    ("Acute cholangitis", "Renal colic", False),
    ("Ovarian torsion", "Renal colic", False),
    ("Testicular torsion", "Renal colic", False),
    ("Biliary colic", "Renal colic", False),
    ("Ureteral calculus", "Biliary colic", False),
    ("Acute pyelonephritis", "Ureterolithiasis", False),
    # biliary colic is symptomatic gallstones, not the cholecystitis or cholangitis they cause
    ("Acute cholecystitis", "Biliary colic", False),
    ("Acute calculous cholecystitis", "Biliary colic", False),
    ("Choledocholithiasis with cholangitis", "Biliary colic", False),
    ("Biliary colic", "Acute cholecystitis", False),
    ("Acute cholecystitis", "Cholelithiasis", False),
    ("Choledocholithiasis with cholangitis", "Cholelithiasis", False),
    ("Acute gallstone pancreatitis", "Pancreatitis due to gallstones", True),
    # a kind of the disease is correct for it, and not for another disease
    ("Acute pyelonephritis", "Cystitis", False),
    ("Urinary tract infection", "Interstitial cystitis", False),
    ("Acute cystitis", "Urinary tract infection", True),
    ("Bacterial meningitis", "HSV encephalitis", False),
    ("Acute exacerbation of chronic obstructive pulmonary disease", "Status asthmaticus", False),
    ("Intracerebral hemorrhage", "Hypertensive encephalopathy", False),
    ("Acute ischemic stroke", "Hypertensive encephalopathy", False),
    ("Sepsis", "Adrenal crisis", False),
    ("Alcoholic hepatitis", "Alcoholic cirrhosis with ascites", False),
    ("Acute decompensated heart failure", "Decompensated cirrhosis", False),
    ("Acute exacerbation of chronic obstructive pulmonary disease", "Heart failure exacerbation", False),
    # a site added to a less specific name, not another disease
    ("Pleural effusion", "Right lower lobe pneumonia", False),
    ("Acute pulmonary embolism", "Right lower lobe pneumonia", False),
    ("Transient ischemic attack", "Left MCA stroke", False),
    ("Subarachnoid hemorrhage", "Left MCA stroke", False),
    ("Intracerebral hemorrhage", "Left MCA stroke", False),
    ("Community-acquired pneumonia", "Hospital-acquired pneumonia", False),
    ("Community-acquired pneumonia", "Ventilator-associated pneumonia", False),
    # a hemorrhagic stroke is a hemorrhage, not an ischemic stroke
    ("Acute ischemic stroke", "Hemorrhagic stroke", False),
    # ICD-10-CM's kidney failure: acute is not chronic
    ("Acute kidney injury", "Chronic kidney disease", False),
    ("Acute kidney injury", "Chronic renal failure", False),
    ("Rhabdomyolysis", "Acute renal failure", False),
    ("Hyperkalemia", "Acute renal failure", False),
    # STEMI of an unspecified site: a STEMI at a site is narrower, an NSTEMI is not one, an MI is broader
    ("ST elevation myocardial infarction", "NSTEMI", False),
    ("Non-ST elevation myocardial infarction", "STEMI", False),
    ("Non-ST elevation myocardial infarction", "Unstable angina", False),
    # a parent code names no disease the candidate leaves out
    ("Type 2 diabetes mellitus with ketoacidosis", "Type 2 diabetes mellitus", False),
    # the abbreviations and lay names stay their own disease
    ("Atrial fibrillation with rapid ventricular response", "SVT", False),
    ("Atrial fibrillation with rapid ventricular response", "AVNRT", False),
    ("Supraventricular tachycardia", "Atrial flutter", False),
    ("Diabetic ketoacidosis", "HHS", False),
    ("Hyperosmolar hyperglycemic state", "DKA", False),
    ("Acute ischemic stroke", "Mini-stroke", False),
    ("Influenza", "Stomach flu", False),
    ("Acute gastroenteritis", "Influenza", False),
    ("Testicular torsion", "Adnexal torsion", False),
    ("Ovarian torsion", "Torsed testicle", False),
    ("Complete heart block", "Simple faint", False),
    ("Gout flare", "Pyogenic arthritis", False),
    ("Cellulitis of the lower limb", "Infectious arthritis", False),
    ("Acute aortic dissection", "Ruptured AAA", False),
    ("Abdominal aortic aneurysm rupture", "Dissecting aortic aneurysm", False),
    ("Urinary tract infection", "Urosepsis", False),
    ("Acute pyelonephritis", "Urosepsis", False),
]


@pytest.mark.parametrize("reference, candidate, correct", FACTS)
def test_what_a_clinician_counts_correct(judge, reference, candidate, correct):
    assert judge.score(reference, candidate).correct is correct


@pytest.mark.parametrize("a, b", [("Acute aortic dissection", "Abdominal aortic aneurysm rupture"),
                                  ("Acute aortic dissection", "Ruptured AAA")])
@pytest.mark.parametrize("form", ["{a} due to {b}", "{b} due to {a}", "{a} with {b}", "{b} with {a}",
                                  "{a} secondary to {b}", "{b} secondary to {a}"])
def test_an_aortic_dissection_and_a_ruptured_aaa_hedged_are_correct_for_at_most_one(judge, a, b, form):
    # "A due to B" was 5 for both: ICD-10-CM's I71 "Aortic aneurysm and dissection" heads I71.3 "Abdominal aortic
    # aneurysm, ruptured", so the whole answer coded to I71.3, the same code as the ruptured aneurysm
    candidate = form.format(a=a, b=b)
    assert not (judge.score(a, candidate).correct and judge.score(b, candidate).correct)


def test_the_stated_cause_decides_which_of_the_aortic_hedges_is_correct(judge):
    dissection, aaa = "Acute aortic dissection", "Abdominal aortic aneurysm rupture"
    assert judge.score(dissection, f"{dissection} due to {aaa}").correct
    assert not judge.score(aaa, f"{dissection} due to {aaa}").correct
    assert judge.score(aaa, f"{aaa} due to {dissection}").correct
    assert not judge.score(dissection, f"{aaa} due to {dissection}").correct
